(println "never printed: the whole file is read first")
(let [x 1]
  (+ x 2)
