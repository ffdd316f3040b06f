;; Pull from scripts.
(def conn (mentat.store/open))
(mentat.store/transact conn
  [{:db/ident :item/name :db/valueType :db.type/string :db/cardinality :db.cardinality/one
    :db/unique :db.unique/identity}
   {:db/ident :item/tags :db/valueType :db.type/keyword :db/cardinality :db.cardinality/many}])
(mentat.store/transact conn [{:item/name "apple" :item/tags [:fruit :red]}])
(def db (mentat.store/db conn))
(prn (mentat.store/pull db [:item/name "apple"] [:item/name :item/tags]))
(prn (mentat.store/pull db [:item/name :item/tags] [:item/name "apple"]))
(mentat.store/pull-many db [:item/name] [[:item/name "apple"]])
