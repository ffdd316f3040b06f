;; Non-tail recursion deeper than the depth limit (1000) is an error, not a crash.
(defn depth [n] (if (zero? n) 0 (inc (depth (dec n)))))
(println (depth 900))
(depth 5000)
