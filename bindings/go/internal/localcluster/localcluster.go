// Package localcluster starts the real daemons for the client tests: one
// sokovan-manager on a Unix socket and one sokovan-agent (id a1) in a
// scratch directory, with the same flags as tests/e2e_cluster.h and the
// Python binding's tests/cluster.py. The busybox image is imported through
// the library (skv_image_import_tar). Test support only.
package localcluster

/*
#cgo pkg-config: sokovan
#include <stdlib.h>
#include <sokovan/image.h>
*/
import "C"

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"time"
	"unsafe"
)

// Cluster is a running manager and agent.
type Cluster struct {
	Root, Endpoint, KeyFile string
	bin, sock, data, images string
	procs                   []*exec.Cmd
}

// SkipReason says why a cluster cannot start here ("" when it can).
func SkipReason(buildDir string) string {
	if os.Geteuid() != 0 {
		return "needs root (the agent runs containers)"
	}
	if _, err := os.Stat("/bin/busybox"); err != nil {
		return "needs /bin/busybox (Debian package busybox-static)"
	}
	for _, d := range []string{"sokovan-manager", "sokovan-agent"} {
		if _, err := os.Stat(filepath.Join(buildDir, "bin", d)); err != nil {
			return fmt.Sprintf("needs %s/bin/%s (make progs; set SKV_TEST_BUILD_DIR)", buildDir, d)
		}
	}
	return ""
}

// Start builds the image and starts both daemons.
func Start(buildDir string) (*Cluster, error) {
	root, err := os.MkdirTemp("", "skv-go-")
	if err != nil {
		return nil, err
	}
	c := &Cluster{Root: root, bin: filepath.Join(buildDir, "bin"), sock: filepath.Join(root, "m.sock"),
		data: filepath.Join(root, "mgr"), images: filepath.Join(root, "images")}
	c.Endpoint, c.KeyFile = "unix:"+c.sock, filepath.Join(c.data, "admin.key")
	if err := c.importBusybox(); err != nil {
		c.Stop()
		return nil, err
	}
	if err := c.start(); err != nil {
		c.Stop()
		return nil, err
	}
	return c, nil
}

func (c *Cluster) importBusybox() error {
	rfs := filepath.Join(c.Root, "rfs")
	script := "set -e; mkdir -p bin etc tmp proc sys dev; chmod 1777 tmp; cp /bin/busybox bin/; " +
		"for a in sh true echo sleep cat; do ln -s busybox bin/$a; done"
	if err := os.MkdirAll(rfs, 0o755); err != nil {
		return err
	}
	cmd := exec.Command("sh", "-c", script)
	cmd.Dir = rfs
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("busybox rootfs: %v: %s", err, out)
	}
	tar := filepath.Join(c.Root, "busybox.tar")
	if out, err := exec.Command("tar", "-C", rfs, "-cf", tar, ".").CombinedOutput(); err != nil {
		return fmt.Errorf("tar: %v: %s", err, out)
	}
	cdir, cname, ctar := C.CString(c.images), C.CString("busybox"), C.CString(tar)
	defer C.free(unsafe.Pointer(cdir))
	defer C.free(unsafe.Pointer(cname))
	defer C.free(unsafe.Pointer(ctar))
	var st *C.skv_image_store
	var e C.skv_error
	rc := C.skv_image_store_open(&st, cdir, &e)
	if rc == 0 {
		rc = C.skv_image_import_tar(st, cname, ctar, &e)
	}
	C.skv_image_store_free(st)
	if rc != 0 {
		return fmt.Errorf("busybox import: %s", C.GoString(&e.message[0]))
	}
	return nil
}

func (c *Cluster) spawn(name string, argv ...string) (*exec.Cmd, error) {
	log, err := os.Create(filepath.Join(c.Root, name+".log"))
	if err != nil {
		return nil, err
	}
	defer log.Close()
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Stdout, cmd.Stderr = log, log
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	c.procs = append(c.procs, cmd)
	return cmd, nil
}

// LogTail is the end of a daemon's log ("manager", "a1").
func (c *Cluster) LogTail(name string) string {
	b, _ := os.ReadFile(filepath.Join(c.Root, name+".log"))
	if len(b) > 600 {
		b = b[len(b)-600:]
	}
	return string(b)
}

func (c *Cluster) start() error {
	if _, err := c.spawn("manager", c.bin+"/sokovan-manager", "--data-dir", c.data, "--listen", c.sock,
		"--tcp", "none", "--bootstrap-agents", "a1", "--heartbeat-interval-ms", "500",
		"--heartbeat-timeout-ms", "15000"); err != nil {
		return err
	}
	for end := time.Now().Add(15 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		_, e1 := os.Stat(c.sock)
		_, e2 := os.Stat(c.KeyFile)
		if e1 == nil && e2 == nil {
			break
		}
		if time.Now().After(end) {
			return fmt.Errorf("sokovan-manager did not start: %s", c.LogTail("manager"))
		}
	}
	state := filepath.Join(c.Root, "agent-a1")
	_, err := c.spawn("a1", c.bin+"/sokovan-agent", "--agent-id", "a1", "--manager", c.Endpoint,
		"--data-dir", c.data, "--state-dir", state, "--run-dir", filepath.Join(state, "containers"),
		"--image-dir", c.images, "--cpus", "0", "--memory", "4g", "--poll-interval-ms", "10",
		"--stats-interval-ms", "1000", "--reconnect-max-ms", "500")
	return err
}

// Stop terminates the agent, then the manager, and removes the directory.
func (c *Cluster) Stop() {
	for i := len(c.procs) - 1; i >= 0; i-- {
		p := c.procs[i]
		p.Process.Signal(syscall.SIGTERM)
		done := make(chan struct{})
		go func() { p.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			p.Process.Kill()
			<-done
		}
	}
	c.procs = nil
	if os.Getenv("SKV_E2E_KEEP") != "" {
		fmt.Println("kept", c.Root)
		return
	}
	exec.Command("rm", "-rf", "--one-file-system", c.Root).Run()
}
