(defn f [n]
  (if (zero? n)
    0
    (+ 1 (recur (dec n)))))
