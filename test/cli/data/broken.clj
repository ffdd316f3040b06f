(def x 1)

(+ x :not-a-number)
