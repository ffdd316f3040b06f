;; Counts people by whether they have an age; `conn` is the store given on the command line.
(require '[mentat.store :as d])
(def db (d/db conn))
(defn names [q] (sort (d/q db q)))
(println "people:" (count (names '[:find [?n ...] :where [_ :person/name ?n]])))
{:aged (names '[:find [?n ...] :where [?p :person/name ?n] [?p :person/age]])
 :total (d/q db '[:find (count ?p) . :where [?p :person/name]])}
