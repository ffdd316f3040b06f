// Atoms, exceptions, printing and reading, and require.
#include <atomic>

#include "script/convert.h"
#include "script/core.h"
#include "script/print.h"

namespace mentat::script {

namespace {

using Args = const Val*;

AtomObj* AtomArg(const FnObj& self, const Val& v) {
  if (!v.is(Type::kAtom)) Fail(self.name + " expects an atom, got " + PrBrief(v));
  return v.as<AtomObj>();
}

ErrorObj* ErrorArg(const Val& v) { return v.is(Type::kError) ? v.as<ErrorObj>() : nullptr; }

// The arguments printed and joined by spaces (charged as it is built), plus `end`.
std::string Joined(Args a, size_t n, bool readably, const char* end = "") {
  TextBuf out;
  for (size_t i = 0; i < n; ++i) {
    if (i > 0) out.Push(' ');
    PrintVal(a[i], readably, &out);
  }
  out.Append(end);
  return out.Take();
}

// Restores the interpreter's output sink when with-out-str* returns or throws.
class OutputSwap {
 public:
  OutputSwap(Interp& in, std::string* buffer) : in_(in), saved_(in.output()) {
    in.output() = [buffer](std::string_view text) {
      if (Heap* h = CurrentHeap()) h->ChargeRaw(static_cast<int64_t>(text.size()));
      buffer->append(text);
    };
  }
  ~OutputSwap() { in_.output() = std::move(saved_); }

 private:
  Interp& in_;
  std::function<void(std::string_view)> saved_;
};

}  // namespace

void RegisterMisc(Interp& in) {
  in.DefNative(
      "atom",
      [](Interp&, Args a, size_t, const FnObj&) {
        Ref<AtomObj> at = Make<AtomObj>(0);
        at->value = a[0];
        return Val::Object(Type::kAtom, at.get());
      },
      1, 1);
  in.DefNative(
      "deref", [](Interp&, Args a, size_t, const FnObj& s) { return AtomArg(s, a[0])->value; }, 1,
      1);
  in.DefNative(
      "reset!",
      [](Interp&, Args a, size_t, const FnObj& s) {
        AtomArg(s, a[0])->value = a[1];
        return a[1];
      },
      2, 2);
  in.DefNative(
      "swap!",
      [](Interp& in, Args a, size_t n, const FnObj& s) {
        AtomObj* at = AtomArg(s, a[0]);
        ValVec args{at->value};
        args.insert(args.end(), a + 2, a + n);
        at->value = in.Apply(a[1], args.data(), args.size());
        return at->value;
      },
      2, -1);
  in.DefNative(
      "swap-vals!",
      [](Interp& in, Args a, size_t n, const FnObj& s) {
        AtomObj* at = AtomArg(s, a[0]);
        Val old = at->value;
        ValVec args{old};
        args.insert(args.end(), a + 2, a + n);
        at->value = in.Apply(a[1], args.data(), args.size());
        return Vec2(old, at->value);
      },
      2, -1);
  in.DefNative(
      "reset-vals!",
      [](Interp&, Args a, size_t, const FnObj& s) {
        AtomObj* at = AtomArg(s, a[0]);
        Val old = at->value;
        at->value = a[1];
        return Vec2(old, a[1]);
      },
      2, 2);
  in.DefNative(
      "compare-and-set!",
      [](Interp&, Args a, size_t, const FnObj& s) {
        AtomObj* at = AtomArg(s, a[0]);
        bool same = at->value.type() == a[1].type() &&
                    (at->value.heap() ? at->value.obj() == a[1].obj() : Equal(at->value, a[1]));
        if (same) at->value = a[2];
        return Val::Bool(same);
      },
      3, 3);
  in.DefNative(
      "ex-info",
      [](Interp& in, Args a, size_t n, const FnObj& s) {
        const std::string& msg = StrArg(s, a[0]);
        if (!a[1].is(Type::kMap) && !a[1].is_nil()) {
          Fail("ex-info expects a map of data, got " + PrBrief(a[1]));
        }
        in.meter().Text(msg.size());
        Ref<ErrorObj> e = Make<ErrorObj>(msg.size());
        e->message = msg;
        e->data = a[1].is_nil() ? Val::EmptyMap() : a[1];
        e->info = true;
        if (n == 3) e->cause = a[2];
        return Val::Object(Type::kError, e.get());
      },
      2, 3);
  in.DefNative(
      "ex-data",
      [](Interp&, Args a, size_t, const FnObj&) {
        ErrorObj* e = ErrorArg(a[0]);
        return e ? e->data : Val();
      },
      1, 1);
  in.DefNative(
      "ex-message",
      [](Interp&, Args a, size_t, const FnObj&) {
        ErrorObj* e = ErrorArg(a[0]);
        return e ? Val::String(e->message) : Val();
      },
      1, 1);
  in.DefNative(
      "ex-cause",
      [](Interp&, Args a, size_t, const FnObj&) {
        ErrorObj* e = ErrorArg(a[0]);
        return e ? e->cause : Val();
      },
      1, 1);
  in.DefNative(
      "pr-str",
      [](Interp&, Args a, size_t n, const FnObj&) { return Val::String(Joined(a, n, true)); }, 0,
      -1);
  in.DefNative(
      "print-str",
      [](Interp&, Args a, size_t n, const FnObj&) { return Val::String(Joined(a, n, false)); }, 0,
      -1);
  in.DefNative(
      "prn-str",
      [](Interp&, Args a, size_t n, const FnObj&) { return Val::String(Joined(a, n, true, "\n")); },
      0, -1);
  in.DefNative(
      "println-str",
      [](Interp&, Args a, size_t n, const FnObj&) {
        return Val::String(Joined(a, n, false, "\n"));
      },
      0, -1);
  in.DefNative(
      "pr",
      [](Interp& in, Args a, size_t n, const FnObj&) {
        in.Write(Joined(a, n, true));
        return Val();
      },
      0, -1);
  in.DefNative(
      "prn",
      [](Interp& in, Args a, size_t n, const FnObj&) {
        in.Write(Joined(a, n, true, "\n"));
        return Val();
      },
      0, -1);
  in.DefNative(
      "print",
      [](Interp& in, Args a, size_t n, const FnObj&) {
        in.Write(Joined(a, n, false));
        return Val();
      },
      0, -1);
  in.DefNative(
      "println",
      [](Interp& in, Args a, size_t n, const FnObj&) {
        in.Write(Joined(a, n, false, "\n"));
        return Val();
      },
      0, -1);
  in.DefNative(
      "newline",
      [](Interp& in, Args, size_t, const FnObj&) {
        in.Write("\n");
        return Val();
      },
      0, 0);
  in.DefNative(
      "with-out-str*",
      [](Interp& in, Args a, size_t, const FnObj&) {
        std::string buffer;
        {
          OutputSwap swap(in, &buffer);
          in.Apply(a[0], nullptr, 0);
        }
        if (Heap* h = CurrentHeap()) h->RefundRaw(static_cast<int64_t>(buffer.size()));
        return Val::String(std::move(buffer));
      },
      1, 1);
  in.DefNative(
      "read-string",
      [](Interp&, Args a, size_t, const FnObj& s) {
        edn::ReadOptions options;
        options.allow_quote = true;
        options.script_syntax = true;
        ScopedCharge tree;  // until the script value is made
        Result<edn::Value> form = ReadCharged(StrArg(s, a[0]), options, &tree);
        if (!form.ok()) Fail("read-string: " + form.status().message(), Code::kParse);
        return FromEdn(*form);
      },
      1, 1);
  in.DefNative(
      "gensym",
      [](Interp&, Args a, size_t n, const FnObj& s) {
        static std::atomic<uint64_t> counter{0};
        std::string prefix = n == 1 ? StrArg(s, a[0]) : "G__";
        return Val::Symbol(prefix + std::to_string(++counter));
      },
      0, 1);
  in.DefNative(
      "inst-ms",
      [](Interp&, Args a, size_t, const FnObj& s) {
        if (!a[0].is(Type::kInst)) Fail(s.name + " expects an inst");
        int64_t us = a[0].as_int();
        return Val::Int(us >= 0 ? us / 1000 : -((-us + 999) / 1000));
      },
      1, 1);
  in.DefNative(
      "parse-uuid",
      [](Interp&, Args a, size_t, const FnObj& s) {
        const std::string& text = StrArg(s, a[0]);
        if (text.size() != 36) return Val();  // 8-4-4-4-12 hex digits
        Result<edn::Uuid> u = edn::ParseUuid(text);
        if (!u.ok()) return Val();
        return Val::Text(Type::kUuid, std::string(u->begin(), u->end()));
      },
      1, 1);
  in.DefNative(
      "require",
      [](Interp& in, Args a, size_t n, const FnObj&) {
        for (size_t i = 0; i < n; ++i) {
          Val spec = a[i];
          Val ns = spec.is(Type::kVector) ? First(spec) : spec;
          if (!ns.is(Type::kSymbol)) Fail("require expects a namespace symbol or [ns :as alias]");
          static const char* const kKnown[] = {"clojure.core", "clojure.string", "mentat.store",
                                               "user"};
          bool known = false;
          for (const char* k : kKnown) known = known || ns.str() == k;
          if (!known) {
            Fail("namespace " + ns.str() + " is not available (scripts cannot load files)",
                 Code::kNotFound);
          }
          if (spec.is(Type::kVector)) {
            ValVec parts = ToVector(spec);
            for (size_t k = 1; k + 1 < parts.size(); k += 2) {
              if (parts[k].is(Type::kKeyword) && parts[k].str() == "as" &&
                  parts[k + 1].is(Type::kSymbol)) {
                in.aliases()[parts[k + 1].str()] = ns.str();
              }
            }
          }
        }
        return Val();
      },
      0, -1);
}

}  // namespace mentat::script
