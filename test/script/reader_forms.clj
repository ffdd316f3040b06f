;; Clojure reader forms beyond EDN: 'quote, @deref, #(...) anonymous functions, #"regex".
(def a (atom 5))
(prn @a (swap! a inc) @a (deref a) '@a)
(prn (let [deref (fn [_] :shadowed)] @a))            ; @ always means clojure.core/deref
(prn (map #(* % %) [1 2 3]) (#(+ %1 %2) 3 4) (#(vector %2 %) 1 2) (#(do 7)))
(prn (#(apply + %&) 1 2 3) (#(vector % %&) 1 2 3) (#(vector %2) 1 2) (filter #(even? %) (range 6)))
(prn (reduce #(+ %1 (* 2 %2)) 0 [1 2 3]) (mapv #(hash-map :k %) [1 2]) (first '#(inc %)))
(prn (re-find #"\d+" "ab123c45") (re-matches #"a\"b" "a\"b") (re-seq #"[a-z]" "a1b2")
     (re-find #"(\w+)@(\w+)" "mail joe@host now") (re-matches #"\\" "\\") #"a.b")
(prn (clojure.string/split "a1b22c" #"\d+") (clojure.string/replace "x1y2" #"[0-9]" "_"))
(prn (read-string "@x") (read-string "#\"re\""))
(prn (try (#(+ %1 %2) 1) (catch Exception e (ex-message e))))
