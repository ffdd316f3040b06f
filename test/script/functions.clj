;; Functions, closures, recursion, recur and destructuring.
(defn greet
  "A docstring."
  [name]
  (str "Hello, " name "!"))
(prn (greet "Ada"))
(defn arities ([] :none) ([a] [:one a]) ([a b & more] [:many a b more]))
(prn (arities) (arities 1) (arities 1 2) (arities 1 2 3 4))
(defn make-counter []
  (let [n (atom 0)]
    {:inc (fn [] (swap! n inc)) :get (fn [] (deref n))}))
(let [c (make-counter)]
  ((:inc c)) ((:inc c))
  (prn ((:get c))))
(def adders (map (fn [n] (fn [x] (+ x n))) [1 10 100]))
(prn (map (fn [f] (f 1)) adders))
(defn fib [n] (if (< n 2) n (+ (fib (- n 1)) (fib (- n 2)))))
(prn (map fib (range 15)))
(defn fact [n] (loop [i n acc 1] (if (zero? i) acc (recur (dec i) (* acc i)))))
(prn (fact 20))
(defn count-down [n] (if (pos? n) (recur (dec n)) :done))
(prn (count-down 10000))
(defn sum-rest [& xs] (if (empty? xs) 0 (+ (first xs) (apply sum-rest (rest xs)))))
(prn (sum-rest 1 2 3 4))
(prn ((fn self [n] (if (zero? n) [] (conj (self (dec n)) n))) 4))
(let [[a [b c] & more :as all] [1 [2 3] 4 5]] (prn a b c more all))
(let [{:keys [x y] :or {y :default} :as m} {:x 1}] (prn x y m))
(let [{a :a {b :b} :nested} {:a 1 :nested {:b 2}}] (prn a b))
(defn opts [& {:keys [size color] :or {size 1}}] [size color])
(prn (opts) (opts :color :red) (opts :size 3 :color :blue))
(let [[x y] nil [p q] "ab"] (prn x y p q))
(defn shadow [inc] (inc 1))
(prn (shadow dec))
(let [x 1 x (+ x 1) f (fn [] x)] (prn (f)))
(fact 5)
