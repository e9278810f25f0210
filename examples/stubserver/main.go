// Command stubserver is the weather API `make demo` points its HTTP tool
// at: deterministic answers, loopback only. With -api-key it wants that
// key in X-Api-Key and, like a careless API, echoes it in the answer.
package main

import (
	"encoding/json"
	"flag"
	"hash/fnv"
	"log"
	"net/http"
	"strconv"
	"time"
)

func main() {
	addr := flag.String("addr", "127.0.0.1:18089", "listen address")
	key := flag.String("api-key", "", "the API key callers must send in X-Api-Key (none: no check)")
	flag.Parse()
	mux := http.NewServeMux()
	mux.HandleFunc("GET /v1/forecast/{city}", func(w http.ResponseWriter, r *http.Request) {
		if *key != "" && r.Header.Get("X-Api-Key") != *key {
			http.Error(w, `{"error":"invalid API key"}`, http.StatusUnauthorized)
			return
		}
		forecast(w, r)
	})
	srv := &http.Server{Addr: *addr, Handler: mux, ReadHeaderTimeout: 5 * time.Second}
	log.Fatal(srv.ListenAndServe())
}

func forecast(w http.ResponseWriter, r *http.Request) {
	city := r.PathValue("city")
	days, err := strconv.Atoi(r.URL.Query().Get("days"))
	if err != nil || days < 1 {
		days = 1
	}
	days = min(days, 7)
	h := fnv.New32a()
	h.Write([]byte(city))
	seed := int(h.Sum32() % 15)
	out := []map[string]any{}
	for d := range days {
		out = append(out, map[string]any{"day": d + 1, "temp_c": 8 + (seed+3*d)%17, "condition": []string{"sunny", "cloudy", "rain", "windy"}[(seed+d)%4]})
	}
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(map[string]any{"city": city, "forecast": out, "api_key": r.Header.Get("X-Api-Key")})
}
