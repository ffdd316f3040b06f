#!/usr/bin/env python3
"""Export/import round trip through the mentat binary, compared datom by datom.

A generated store (every value type, unique identity and unique value attributes,
entities without any unique attribute linked in cycles, components, enum idents,
cardinality-many refs, an attribute carrying a user attribute, retractions and updates in
its history) is exported with small transactions, imported into a fresh store, and the two
stores' current datoms are compared modulo entity-id renumbering. Every generated entity
carries a :test/key (not unique, so the exporter cannot use it) by which the test matches
entities; schema entities are matched by ident.

Then the --since path: a store holding the first half of the data is exported and
imported into a fresh copy, the second half (new entities and updates to entities with a
unique attribute) is transacted on the original, exported with --since, and applied to the
copy; the two must again be equal.

Usage: roundtrip_test.py --mentat PATH [--entities N]
"""
import argparse
import json
import os
import random
import subprocess
import sys
import tempfile

MENTAT = None
TX0 = 268435456  # the bootstrap transaction; transaction entities start here

SCHEMA = """[
 {:db/ident :test/key :db/valueType :db.type/long :db/cardinality :db.cardinality/one}
 {:db/ident :acct/id :db/valueType :db.type/string :db/cardinality :db.cardinality/one
  :db/unique :db.unique/identity}
 {:db/ident :acct/email :db/valueType :db.type/string :db/cardinality :db.cardinality/one
  :db/unique :db.unique/value}
 {:db/ident :acct/nums :db/valueType :db.type/long :db/cardinality :db.cardinality/many}
 {:db/ident :acct/owns :db/valueType :db.type/ref :db/cardinality :db.cardinality/many}
 {:db/ident :acct/best :db/valueType :db.type/ref :db/cardinality :db.cardinality/one}
 {:db/ident :node/label :db/valueType :db.type/string :db/cardinality :db.cardinality/one
  :db/fulltext true}
 {:db/ident :node/next :db/valueType :db.type/ref :db/cardinality :db.cardinality/one}
 {:db/ident :node/links :db/valueType :db.type/ref :db/cardinality :db.cardinality/many}
 {:db/ident :node/part :db/valueType :db.type/ref :db/cardinality :db.cardinality/many
  :db/isComponent true}
 {:db/ident :node/kind :db/valueType :db.type/ref :db/cardinality :db.cardinality/one}
 {:db/ident :node/tags :db/valueType :db.type/keyword :db/cardinality :db.cardinality/many}
 {:db/ident :node/when :db/valueType :db.type/instant :db/cardinality :db.cardinality/one}
 {:db/ident :node/uuid :db/valueType :db.type/uuid :db/cardinality :db.cardinality/one}
 {:db/ident :node/weight :db/valueType :db.type/double :db/cardinality :db.cardinality/one}
 {:db/ident :node/ok :db/valueType :db.type/boolean :db/cardinality :db.cardinality/one}
 {:db/ident :node/blob :db/valueType :db.type/bytes :db/cardinality :db.cardinality/one}
 {:db/ident :node/scratch :db/valueType :db.type/long :db/cardinality :db.cardinality/one
  :db/noHistory true :db/index true}
 {:db/ident :meta/owner :db/valueType :db.type/string :db/cardinality :db.cardinality/one
  :db/doc "who looks after an attribute"}
 {:db/ident :kind/a} {:db/ident :kind/b} {:db/ident :kind/c}]
[{:db/id :node/label :meta/owner "graph team"}]
"""


def edn_str(s):
    return '"' + s.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n") + '"'


class Gen:
    """Deterministic random transactions over accounts (unique) and nodes (not unique)."""

    def __init__(self, seed):
        self.r = random.Random(seed)
        self.key = 0
        self.accts = []  # ids of the accounts committed so far
        self.next_acct = 0
        self.nodes = 0

    def next_key(self):
        self.key += 1
        return self.key

    def node(self, tid, others):
        r = self.r
        label = "node %d%s" % (self.next_key(), r.choice(["", " é", ' "q"', "\n2", "\\"]))
        fields = [f":db/id {edn_str(tid)}", f":test/key {self.key}", f":node/label {edn_str(label)}"]
        if others and r.random() < 0.7:
            fields.append(f":node/next {edn_str(r.choice(others))}")
        if others and r.random() < 0.5:
            links = r.sample(others, min(len(others), r.randint(1, 3)))
            fields.append(":node/links [" + " ".join(edn_str(x) for x in links) + "]")
        if r.random() < 0.3:
            fields.append(f":node/part [{{:test/key {self.next_key()} :node/label \"part\"}}]")
        fields.append(f":node/kind {r.choice([':kind/a', ':kind/b', ':kind/c'])}")
        if r.random() < 0.5:
            fields.append(":node/tags [" + " ".join(r.sample([":x", ":y/z", ":w"], 2)) + "]")
        if r.random() < 0.5:
            fields.append(f":node/when #inst \"20{r.randint(10, 29)}-0{r.randint(1, 9)}-1{r.randint(0, 9)}T12:34:56.789Z\"")
        if r.random() < 0.5:
            fields.append(":node/uuid #uuid \"%08x-1234-4abc-8def-%012x\"" % (r.getrandbits(32), r.getrandbits(48)))
        if r.random() < 0.5:
            fields.append(f":node/weight {r.choice(['1.5', '-0.25', '1e100', '3.0'])}")
        if r.random() < 0.5:
            fields.append(f":node/ok {r.choice(['true', 'false'])}")
        if r.random() < 0.2:
            fields.append(f":node/blob #bytes \"{r.getrandbits(64):016x}\"")
        if r.random() < 0.2:
            fields.append(f":node/scratch {r.randint(-5, 5)}")
        return "{" + " ".join(fields) + "}"

    def tx(self, n_nodes, n_accts):
        """A transaction: nodes linked by tempids (cycles included), accounts refer to
        nodes of this transaction and to earlier accounts by lookup ref."""
        tids = [f"n{self.nodes + i}" for i in range(n_nodes)]
        self.nodes += n_nodes
        forms = [self.node(t, tids) for t in tids]
        new = []
        for _ in range(n_accts):
            aid = f"acct-{self.next_acct}"
            self.next_acct += 1
            fields = [f":acct/id {edn_str(aid)}", f":test/key {self.next_key()}"]
            if self.r.random() < 0.6:
                fields.append(f":acct/email {edn_str(aid + '@example.com')}")
            fields.append(":acct/nums [" + " ".join(str(self.r.randint(0, 99)) for _ in range(3)) + "]")
            if tids:
                fields.append(":acct/owns [" + " ".join(edn_str(t) for t in self.r.sample(tids, min(2, len(tids)))) + "]")
            if self.accts and self.r.random() < 0.7:
                fields.append(f":acct/best [:acct/id {edn_str(self.r.choice(self.accts))}]")
            new.append(aid)
            forms.append("{" + " ".join(fields) + "}")
        # Nodes pointing back at accounts (by lookup ref) make cross-transaction refs.
        if self.accts and tids:
            forms.append(f"[:db/add {edn_str(tids[0])} :node/links [:acct/id {edn_str(self.r.choice(self.accts))}]]")
        self.accts += new
        return "[" + "\n ".join(forms) + "]\n"

    def updates(self, n):
        """Card-one updates and new values on accounts (named by their unique id)."""
        if not self.accts:
            return ""
        forms = []
        for aid in self.r.sample(self.accts, min(n, len(self.accts))):
            forms.append(f"{{:acct/id {edn_str(aid)} :acct/nums [{self.r.randint(100, 199)}]"
                         f" :acct/best [:acct/id {edn_str(self.r.choice(self.accts))}]}}")
        return "[" + "\n ".join(forms) + "]\n"

    def retractions(self):
        if len(self.accts) < 3:
            return ""
        aid = self.r.choice(self.accts[:-1])
        gone = self.accts.pop()
        return (f"[[:db/retract [:acct/id {edn_str(aid)}] :acct/nums 0]"
                f" [:db.fn/retractEntity [:acct/id {edn_str(gone)}]]]\n")


def mentat(*args, fmt="edn"):
    p = subprocess.run([MENTAT, "--format", fmt] + list(args), capture_output=True, text=True)
    if p.returncode != 0:
        raise AssertionError(f"mentat {' '.join(args)} failed:\n{p.stderr}")
    return p.stdout


def snapshot(store):
    """The current datoms of `store` as a set of canonical tuples."""
    schema = json.loads(mentat(store, ".schema", fmt="json"))
    refs = {a[":db/ident"] for a in schema if a[":db/valueType"] == ":db.type/ref"}
    refs.update({":db/valueType", ":db/cardinality", ":db/unique"})
    datoms = json.loads(mentat(store, ".datoms :eavt", fmt="json"))
    idents, keys = {}, {}
    for e, a, v, tx, _ in datoms:
        if a == ":db/ident":
            idents[e] = v
        if a == ":test/key":
            keys[e] = v

    def name(e):
        if e in idents:
            return ("ident", idents[e])
        if e in keys:
            return ("key", keys[e])
        raise AssertionError(f"entity {e} has neither an ident nor a :test/key")

    out = set()
    for e, a, v, tx, _ in datoms:
        if e >= TX0 or tx == TX0:
            continue  # transaction entities and the bootstrap
        if a in refs:
            v = name(v)
        out.add((name(e), a, json.dumps(v, sort_keys=True)))
    return out


def compare(a, b, what):
    sa, sb = snapshot(a), snapshot(b)
    if sa != sb:
        only_a = sorted(sa - sb)[:10]
        only_b = sorted(sb - sa)[:10]
        raise AssertionError(f"{what}: stores differ\nonly in {a}: {only_a}\nonly in {b}: {only_b}")
    return len(sa)


def main():
    global MENTAT
    ap = argparse.ArgumentParser()
    ap.add_argument("--mentat", required=True)
    ap.add_argument("--entities", type=int, default=1500)
    args = ap.parse_args()
    MENTAT = os.path.abspath(args.mentat)
    gen = Gen(42)
    with tempfile.TemporaryDirectory(prefix="mentat-roundtrip-") as tmp:
        path = lambda n: os.path.join(tmp, n)  # noqa: E731
        # The first half: schema, linked nodes and accounts, updates, retractions.
        with open(path("first.edn"), "w") as f:
            f.write(SCHEMA)
            while gen.key < args.entities // 2:
                f.write(gen.tx(gen.r.randint(1, 40), gen.r.randint(0, 5)))
                if gen.r.random() < 0.3:
                    f.write(gen.updates(3))
                if gen.r.random() < 0.1:
                    f.write(gen.retractions())
        # The second half: only what --since can carry (no retractions, no refs to old
        # entities without a unique attribute).
        with open(path("second.edn"), "w") as f:
            while gen.key < args.entities:
                f.write(gen.tx(gen.r.randint(1, 40), gen.r.randint(0, 5)))
                if gen.r.random() < 0.3:
                    f.write(gen.updates(3))

        a, b, c = path("a.db"), path("b.db"), path("c.db")
        mentat(a, ".import " + path("first.edn"))
        mid = json.loads(mentat(a, ".stats", fmt="json"))[":last-tx"]
        mentat(a, f".export {path('full1.edn')} --batch 500")
        mentat(b, ".import " + path("full1.edn"))
        n = compare(a, b, "full export of the first half")
        text = open(path("full1.edn")).read()
        txs = sum(1 for line in text.splitlines() if line.startswith("["))
        if txs < 5 or '[:acct/id "' not in text:
            raise AssertionError(f"expected several transactions linked by lookup refs: {txs}")
        print(f"ok   full round trip: {n} datoms equal ({txs} transactions)")

        mentat(a, ".import " + path("second.edn"))
        mentat(a, f".export {path('since.edn')} --since {mid} --batch 700")
        mentat(b, ".import " + path("since.edn"))
        n = compare(a, b, "--since export applied to the copy")
        print(f"ok   --since round trip: {n} datoms equal")

        mentat(a, f".export {path('full2.edn')}")
        mentat(c, ".import " + path("full2.edn"))
        n = compare(a, c, "full export of everything")
        txs = sum(1 for line in open(path("full2.edn")) if line.startswith("["))
        print(f"ok   full round trip of everything: {n} datoms equal ({txs} transactions)")
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main())
    except AssertionError as e:
        print(f"FAIL {e}")
        sys.exit(1)
