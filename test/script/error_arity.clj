(defn two [a b] [a b])
(two 1)
