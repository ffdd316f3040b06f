;; Queries from scripts: q on db values, inputs, errors.
(def conn (mentat.store/open))
(mentat.store/transact conn
  [{:db/ident :item/name :db/valueType :db.type/string :db/cardinality :db.cardinality/one}
   {:db/ident :item/price :db/valueType :db.type/long :db/cardinality :db.cardinality/one}])
(mentat.store/transact conn [{:item/name "apple" :item/price 3} {:item/name "pear" :item/price 5}
                             {:item/name "fig" :item/price 8}])
(def db (mentat.store/db conn))
(prn (mentat.store/q db '[:find ?n ?p :where [?e :item/name ?n] [?e :item/price ?p]]))
(prn (mentat.store/q db '[:find ?p . :in $ ?n :where [?e :item/name ?n] [?e :item/price ?p]] "pear"))
(prn (sort (mentat.store/q db '[:find [?n ...] :in $ [?p ...] :where [?e :item/price ?p] [?e :item/name ?n]] [3 8])))
(prn (mentat.store/q db '[:find (sum ?p) . :where [_ :item/price ?p]]))
(prn (mentat.store/q db "[:find ?n . :where [?e :item/price 5] [?e :item/name ?n]]"))
(def t (mentat.store/basis-t db))
(mentat.store/transact conn [{:item/name "kiwi" :item/price 1}])
(prn (count (mentat.store/q db '[:find ?e :where [?e :item/name]]))
     (count (mentat.store/q (mentat.store/db conn) '[:find ?e :where [?e :item/name]]))
     (count (mentat.store/q (mentat.store/as-of (mentat.store/db conn) t) '[:find ?e :where [?e :item/name]]))
     (mentat.store/q (mentat.store/since (mentat.store/db conn) t) '[:find [?n ...] :where [?e :item/name ?n]]))
(mentat.store/q db '[:find ?n :in $ ?missing :where [?e :item/name ?n]])
