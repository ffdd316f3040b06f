(let [a 1 b] (+ a b))
