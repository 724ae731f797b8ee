package main

import (
	"encoding/json"
	"flag"
	"log"
	"net/http"
	"os"
)

func main() {
	nodesPath := flag.String("nodes", "", "JSON file: [{\"name\":..,\"capacity\":\"cpu=16,mem=64g\",\"gpus\":4,\"labels\":{..}}]")
	listen := flag.String("listen", "127.0.0.1:8888", "address to serve on")
	selector := flag.String("selector", "concentrated", "libsokovan agent selector")
	flag.Parse()
	if *nodesPath == "" {
		log.Fatal("-nodes is required")
	}
	raw, err := os.ReadFile(*nodesPath)
	if err != nil {
		log.Fatal(err)
	}
	var nodes []Node
	if err := json.Unmarshal(raw, &nodes); err != nil {
		log.Fatalf("%s: %v", *nodesPath, err)
	}
	ext, err := NewExtender(nodes, *selector)
	if err != nil {
		log.Fatal(err)
	}
	defer ext.Close()
	log.Printf("scheduling %d nodes on %s", len(nodes), *listen)
	log.Fatal(http.ListenAndServe(*listen, ext.Handler()))
}
