;; #() cannot nest (as in Clojure); the whole file is read before anything runs.
(println "never printed")
(map #(map #(inc %) %) [[1]])
