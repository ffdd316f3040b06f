(def x 1)
(println "before the error")
(defn f [y]
  (+ x y z))
