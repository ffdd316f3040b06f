(defn check [n]
  (when (> n 2)
    (throw (ex-info "too big" {:n n}))))
(doseq [i (range 5)]
  (println "checking" i)
  (check i))
