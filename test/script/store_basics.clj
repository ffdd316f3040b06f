;; The store without queries: transact, db values, entity, read, datoms, entities,
;; as-of, since, history, with, cas and retractEntity.
(require '[mentat.store :as d])
(def conn (d/open))
(def schema
  [{:db/ident :person/name :db/valueType :db.type/string :db/cardinality :db.cardinality/one
    :db/unique :db.unique/identity}
   {:db/ident :person/age :db/valueType :db.type/long :db/cardinality :db.cardinality/one}
   {:db/ident :person/likes :db/valueType :db.type/keyword :db/cardinality :db.cardinality/many}
   {:db/ident :person/pet :db/valueType :db.type/ref :db/cardinality :db.cardinality/one
    :db/isComponent true}
   {:db/ident :pet/name :db/valueType :db.type/string :db/cardinality :db.cardinality/one}])
(def r0 (d/transact conn schema))
(println "schema datoms:" (count (:tx-data r0)))
(def r1 (d/transact conn [{:db/id "ada" :person/name "Ada" :person/age 30 :person/likes [:math :tea]
                          :person/pet {:pet/name "Rex"}}]))
(def ada (get (:tempids r1) "ada"))
(def t1 (:tx-id r1))
(def db1 (d/db conn))
(println "entity:" (dissoc (d/entity db1 ada) :db/id :person/pet))
(println "pet:" (:pet/name (d/entity db1 (:person/pet (d/entity db1 ada)))))
(println "read:" (d/read db1 ada :person/age) (d/read db1 [:person/name "Ada"] :person/likes))
(println "entities:" (= #{ada} (d/entities db1 :person/name)))
(println "datoms:" (map (fn [[e a v]] [a v]) (d/datoms db1 :aevt :person/age)))
;; A later transaction does not change db1.
(def t2 (:tx-id (d/transact conn [[:db/cas ada :person/age 30 31]])))
(println "db1 still:" (d/read db1 ada :person/age) "now:" (d/read (d/db conn) ada :person/age))
(println "cas mismatch:"
         (try (d/transact conn [[:db/cas ada :person/age 30 32]]) :no-error
              (catch Exception e (boolean (re-find ":db/cas" (ex-message e))))))
(def db2 (d/db conn))
(println "as-of t1:" (d/read (d/as-of db2 t1) ada :person/age)
         "since t1:" (map (fn [d] (nth d 2)) (d/datoms (d/since db2 t1) :eavt ada :person/age)))
(println "history:" (map (fn [[_ _ v _ added]] [v added])
                         (d/datoms (d/history db2) :eavt ada :person/age)))
;; with is speculative.
(def w (d/with db2 [{:db/id ada :person/age 99}]))
(println "with:" (d/read (:db-after w) ada :person/age) (d/read (d/db conn) ada :person/age)
         (= db2 (:db-before w)))
;; retractEntity removes the entity and its components.
(def pet (:person/pet (d/entity db2 ada)))
(d/transact conn [[:db/retractEntity ada]])
(println "retracted:" (d/entity (d/db conn) ada) (d/entity (d/db conn) pet)
         "before:" (:pet/name (d/entity db2 pet)))
(d/close conn)
(try (d/db conn) (catch Exception e (ex-message e)))
