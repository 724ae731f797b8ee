package main

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"testing"
)

// n0: 8 cores, 2 GPUs (zone a); n1: 32 cores, 4 GPUs (zone b); n2: no GPU.
var testNodes = []Node{
	{Name: "n0", Capacity: "cpu=8,mem=32g", GPUs: 2, Labels: map[string]string{"zone": "a"}},
	{Name: "n1", Capacity: "cpu=32,mem=128g", GPUs: 4, Labels: map[string]string{"zone": "b"}},
	{Name: "n2", Capacity: "cpu=64,mem=256g"},
}

func server(t *testing.T) *httptest.Server {
	t.Helper()
	ext, err := NewExtender(testNodes, "concentrated")
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(ext.Handler())
	t.Cleanup(func() { srv.Close(); ext.Close() })
	return srv
}

func call(t *testing.T, srv *httptest.Server, path string, in, out any) int {
	t.Helper()
	body, _ := json.Marshal(in)
	resp, err := http.Post(srv.URL+path, "application/json", bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if err := json.NewDecoder(resp.Body).Decode(out); err != nil {
		t.Fatalf("%s: bad JSON answer: %v", path, err)
	}
	return resp.StatusCode
}

var all = []string{"n0", "n1", "n2"}

func TestFilter(t *testing.T) {
	srv := server(t)
	var r FilterResult
	pod := Pod{Name: "p", Request: "cpu=4,mem=8g,cuda.device=2"}
	if code := call(t, srv, "/filter", Args{Pod: pod, NodeNames: append(all, "ghost")}, &r); code != 200 {
		t.Fatalf("status %d", code)
	}
	if !reflect.DeepEqual(r.NodeNames, []string{"n0", "n1"}) {
		t.Errorf("fitting nodes %v", r.NodeNames)
	}
	if !strings.Contains(r.FailedNodes["n2"], "cuda.device") || r.FailedNodes["ghost"] != "unknown node" {
		t.Errorf("failed nodes %v", r.FailedNodes)
	}
	// Labels narrow the candidates; the probes left nothing behind.
	pod.Labels = map[string]string{"zone": "b"}
	call(t, srv, "/filter", Args{Pod: pod, NodeNames: all}, &r)
	if !reflect.DeepEqual(r.NodeNames, []string{"n1"}) {
		t.Errorf("zone b: %v", r.NodeNames)
	}
}

func TestScoreAndBind(t *testing.T) {
	srv := server(t)
	pod := Pod{Name: "a", Request: "cpu=4,cuda.device=1"}
	var scores []HostPriority
	call(t, srv, "/score", Args{Pod: pod, NodeNames: all}, &scores)
	got := map[string]int{}
	for _, h := range scores {
		got[h.Host] = h.Score
	}
	t.Logf("scores %v", got)
	// concentrated packs: the smaller GPU node is the selector's choice;
	// n2 has no GPU.
	if got["n0"] != MaxScore || got["n1"] <= 0 || got["n1"] >= MaxScore || got["n2"] != 0 {
		t.Errorf("scores %v", got)
	}
	var bound struct{ SessionID string }
	if code := call(t, srv, "/bind", BindArgs{Pod: pod, Node: "n0"}, &bound); code != 200 || bound.SessionID != "pod/a" {
		t.Fatalf("bind: %d %+v", code, bound)
	}
	// n0 has one GPU left: a two-GPU pod no longer fits there.
	var r FilterResult
	call(t, srv, "/filter", Args{Pod: Pod{Name: "b", Request: "cuda.device=2"}, NodeNames: all}, &r)
	if !reflect.DeepEqual(r.NodeNames, []string{"n1"}) || !strings.Contains(r.FailedNodes["n0"], "cuda.device") {
		t.Errorf("after bind: %+v", r)
	}
	var e map[string]string
	if code := call(t, srv, "/bind", BindArgs{Pod: Pod{Name: "c", Request: "cuda.device=2"}, Node: "n0"}, &e); code != 422 ||
		!strings.Contains(e["error"], "does not fit") {
		t.Errorf("bind that cannot fit: %d %v", code, e)
	}
	var ok struct{}
	if code := call(t, srv, "/release", BindArgs{Pod: pod}, &ok); code != 200 {
		t.Fatalf("release: %d", code)
	}
	call(t, srv, "/filter", Args{Pod: Pod{Name: "b", Request: "cuda.device=2"}, NodeNames: all}, &r)
	if !reflect.DeepEqual(r.NodeNames, []string{"n0", "n1"}) {
		t.Errorf("after release: %v", r.NodeNames)
	}
}

func TestBadRequests(t *testing.T) {
	srv := server(t)
	var e map[string]string
	if code := call(t, srv, "/filter", Args{Pod: Pod{Name: "x", Request: "cpu=lots"}, NodeNames: all}, &e); code != 422 ||
		!strings.Contains(e["error"], "SKV_EINVAL") {
		t.Errorf("bad slots: %d %v", code, e)
	}
	resp, err := http.Post(srv.URL+"/score", "application/json", strings.NewReader(`{"pod":{"name":"x"},"bogus":1}`))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 400 {
		t.Errorf("unknown field: %d", resp.StatusCode)
	}
	resp, err = http.Get(srv.URL + "/filter")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 405 {
		t.Errorf("GET /filter: %d", resp.StatusCode)
	}
	if code := call(t, srv, "/release", BindArgs{Pod: Pod{Name: "never"}}, &e); code != 422 || !strings.Contains(e["error"], "SKV_ENOENT") {
		t.Errorf("release unknown: %d %v", code, e)
	}
	if _, err := NewExtender([]Node{{Name: "bad", Capacity: "cpu=?"}}, "concentrated"); err == nil {
		t.Error("bad node capacity accepted")
	}
}
