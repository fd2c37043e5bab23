package analysis

import (
	"fmt"
	"sort"
	"strings"

	"github.com/gofault/gofault/catalog"
)

// This file describes the standard library (and a few well-known
// dependencies whose I/O happens behind goroutines and channels, such as
// gRPC) by table instead of by analysing their bodies: which calls do I/O,
// what they really return when the I/O fails, which types wrap another
// reader or writer, and which types can never fail.

// Classes of I/O.
const (
	ioDisk = "disk"
	ioNet  = "net"
)

// prim describes one I/O primitive.
type prim struct {
	io     string
	values []catalog.ErrorValue
}

// pathErr is what os file operations return: *fs.PathError{Op, Path, Err}.
func pathErr(op, errno string) catalog.ErrorValue {
	return catalog.ErrorValue{
		Name:    errno,
		Expr:    fmt.Sprintf("&fs.PathError{Op: %q, Path: \"\", Err: syscall.%s}", op, errno),
		Imports: []string{"io/fs", "syscall"},
	}
}

// linkErr is what os.Rename and os.Link return.
func linkErr(op, errno string) catalog.ErrorValue {
	return catalog.ErrorValue{
		Name:    errno,
		Expr:    fmt.Sprintf("&os.LinkError{Op: %q, Old: \"\", New: \"\", Err: syscall.%s}", op, errno),
		Imports: []string{"os", "syscall"},
	}
}

// errnoErr is what raw system calls return.
func errnoErr(errno string) catalog.ErrorValue {
	return catalog.ErrorValue{Name: errno, Expr: "syscall." + errno, Imports: []string{"syscall"}}
}

// opErr is what net conns, dialers and listeners return.
func opErr(op, syscallName, errno string) catalog.ErrorValue {
	return catalog.ErrorValue{
		Name: errno,
		Expr: fmt.Sprintf("&net.OpError{Op: %q, Net: \"tcp\", Err: &os.SyscallError{Syscall: %q, Err: syscall.%s}}",
			op, syscallName, errno),
		Imports: []string{"net", "os", "syscall"},
	}
}

// deadlineErr is what a conn operation returns when its deadline passes.
func deadlineErr(op string) catalog.ErrorValue {
	return catalog.ErrorValue{
		Name:    "deadline",
		Expr:    fmt.Sprintf("&net.OpError{Op: %q, Net: \"tcp\", Err: os.ErrDeadlineExceeded}", op),
		Imports: []string{"net", "os"},
	}
}

// urlErr is what net/http client methods return: the transport error
// wrapped in *url.Error.
func urlErr(method string, inner catalog.ErrorValue) catalog.ErrorValue {
	return catalog.ErrorValue{
		Name:    inner.Name,
		Expr:    fmt.Sprintf("&url.Error{Op: %q, URL: \"\", Err: %s}", method, inner.Expr),
		Imports: append([]string{"net/url"}, inner.Imports...),
	}
}

// sentinel is a package-level error variable.
func sentinel(pkgPath, pkgName, name string) catalog.ErrorValue {
	return catalog.ErrorValue{Name: name, Expr: pkgName + "." + name, Imports: []string{pkgPath}}
}

// grpcStatus is a gRPC status error as a client sees it.
func grpcStatus(code, msg string) catalog.ErrorValue {
	return catalog.ErrorValue{
		Name:    code,
		Expr:    fmt.Sprintf("status.Error(codes.%s, %q)", code, msg),
		Imports: []string{"google.golang.org/grpc/status", "google.golang.org/grpc/codes"},
	}
}

var (
	eofErr           = sentinel("io", "io", "EOF")
	unexpectedEOFErr = sentinel("io", "io", "ErrUnexpectedEOF")
)

// diskValues returns the errors of a file operation op.
func diskValues(op string) []catalog.ErrorValue {
	switch op {
	case "write", "open+create", "mkdir", "truncate":
		o := op
		if op == "open+create" {
			o = "open"
		}
		return []catalog.ErrorValue{pathErr(o, "EIO"), pathErr(o, "ENOSPC")}
	case "open":
		return []catalog.ErrorValue{pathErr(op, "EIO"), pathErr(op, "EMFILE")}
	case "rename", "link", "symlink":
		return []catalog.ErrorValue{linkErr(op, "EIO"), linkErr(op, "ENOSPC")}
	default:
		return []catalog.ErrorValue{pathErr(op, "EIO")}
	}
}

// netValues returns the errors of a conn, dialer or listener operation.
func netValues(op string) []catalog.ErrorValue {
	switch op {
	case "read":
		return []catalog.ErrorValue{opErr("read", "read", "ECONNRESET"), deadlineErr("read"), eofErr}
	case "write":
		return []catalog.ErrorValue{opErr("write", "write", "EPIPE"), opErr("write", "write", "ECONNRESET"), deadlineErr("write")}
	case "dial":
		return []catalog.ErrorValue{opErr("dial", "connect", "ECONNREFUSED"), opErr("dial", "connect", "ETIMEDOUT")}
	case "listen":
		return []catalog.ErrorValue{opErr("listen", "bind", "EADDRINUSE")}
	case "accept":
		return []catalog.ErrorValue{opErr("accept", "accept4", "EMFILE")}
	}
	return nil
}

// prims are the I/O primitives, keyed by ssa.Function.String().
var prims = map[string]prim{}

func addDisk(op string, names ...string) {
	for _, n := range names {
		prims[n] = prim{io: ioDisk, values: diskValues(op)}
	}
}

func addNet(op string, names ...string) {
	for _, n := range names {
		prims[n] = prim{io: ioNet, values: netValues(op)}
	}
}

func init() {
	addDisk("open", "os.Open", "os.ReadDir", "os.ReadFile", "os.DirFS")
	addDisk("open+create", "os.OpenFile", "os.Create", "os.CreateTemp")
	addDisk("mkdir", "os.Mkdir", "os.MkdirAll", "os.MkdirTemp")
	addDisk("write", "os.WriteFile")
	addDisk("remove", "os.Remove")
	addDisk("unlinkat", "os.RemoveAll")
	addDisk("stat", "os.Stat", "os.Lstat")
	addDisk("truncate", "os.Truncate")
	addDisk("chmod", "os.Chmod")
	addDisk("rename", "os.Rename")
	addDisk("link", "os.Link")
	addDisk("symlink", "os.Symlink")
	// io/ioutil's wrappers (deprecated since Go 1.16, still called by
	// etcd v3.5 and older code): the std library is no analysed package,
	// so a call of a wrapper is a site only where it is a primitive.
	addDisk("open", "io/ioutil.ReadFile", "io/ioutil.ReadDir")
	addDisk("write", "io/ioutil.WriteFile")
	addDisk("open+create", "io/ioutil.TempFile")
	addDisk("mkdir", "io/ioutil.TempDir")
	addDisk("read", "(*os.File).Read", "(*os.File).ReadAt")
	addDisk("write", "(*os.File).Write", "(*os.File).WriteAt", "(*os.File).WriteString", "(*os.File).ReadFrom")
	addDisk("sync", "(*os.File).Sync")
	addDisk("close", "(*os.File).Close")
	addDisk("truncate", "(*os.File).Truncate")
	addDisk("stat", "(*os.File).Stat")
	addDisk("readdirent", "(*os.File).ReadDir", "(*os.File).Readdir", "(*os.File).Readdirnames")
	addDisk("chmod", "(*os.File).Chmod")
	for _, p := range []string{"syscall", "golang.org/x/sys/unix"} {
		for _, f := range []string{"Fsync", "Fdatasync", "Flock", "FcntlFlock", "Fallocate", "Mmap", "Munmap", "Madvise",
			"Pwrite", "Pread", "Ftruncate", "SyncFileRange", "Open", "Openat", "Fstat"} {
			v := []catalog.ErrorValue{errnoErr("EIO")}
			if f == "Fallocate" || f == "Pwrite" || f == "Ftruncate" {
				v = append(v, errnoErr("ENOSPC"))
			}
			prims[p+"."+f] = prim{io: ioDisk, values: v}
		}
	}

	for _, c := range []string{"net.TCPConn", "net.UnixConn", "net.UDPConn", "net.IPConn", "crypto/tls.Conn", "net.conn"} {
		addNet("read", "(*"+c+").Read", "(*"+c+").ReadFrom")
		addNet("write", "(*"+c+").Write", "(*"+c+").WriteTo")
	}
	addNet("dial", "net.Dial", "net.DialTimeout", "net.DialTCP", "net.DialUnix", "(*net.Dialer).Dial", "(*net.Dialer).DialContext",
		"crypto/tls.Dial", "crypto/tls.DialWithDialer", "(*crypto/tls.Dialer).Dial", "(*crypto/tls.Dialer).DialContext")
	addNet("listen", "net.Listen", "net.ListenTCP", "net.ListenUnix", "(*net.ListenConfig).Listen", "crypto/tls.Listen")
	addNet("accept", "(*net.TCPListener).Accept", "(*net.TCPListener).AcceptTCP", "(*net.UnixListener).Accept", "(*net.UnixListener).AcceptUnix")

	for _, m := range []string{"Do", "Get", "Post", "PostForm", "Head"} {
		method := strings.ToUpper(m)
		if m == "Do" {
			method = "Get"
		}
		if m == "PostForm" {
			method = "POST"
		}
		method = strings.ToUpper(method[:1]) + strings.ToLower(method[1:])
		v := []catalog.ErrorValue{urlErr(method, netValues("dial")[0]), urlErr(method, netValues("read")[0])}
		prims["(*net/http.Client)."+m] = prim{io: ioNet, values: v}
		if m != "Do" {
			prims["net/http."+m] = prim{io: ioNet, values: v}
		}
	}
	prims["(*net/http.Transport).RoundTrip"] = prim{io: ioNet, values: []catalog.ErrorValue{netValues("dial")[0], netValues("read")[0]}}

	badConn := sentinel("database/sql/driver", "driver", "ErrBadConn")
	connDone := sentinel("database/sql", "sql", "ErrConnDone")
	for _, m := range []string{"Query", "QueryContext", "Exec", "ExecContext", "Begin", "BeginTx", "Ping", "PingContext", "Prepare", "PrepareContext", "Conn"} {
		prims["(*database/sql.DB)."+m] = prim{io: ioNet, values: []catalog.ErrorValue{badConn}}
	}
	for _, m := range []string{"Query", "QueryContext", "Exec", "ExecContext", "Commit", "Rollback", "Prepare", "PrepareContext"} {
		prims["(*database/sql.Tx)."+m] = prim{io: ioNet, values: []catalog.ErrorValue{connDone}}
	}

	unavailable := grpcStatus("Unavailable", "transport is closing")
	deadline := grpcStatus("DeadlineExceeded", "context deadline exceeded")
	for _, n := range []string{"(*google.golang.org/grpc.ClientConn).Invoke", "(*google.golang.org/grpc.ClientConn).NewStream",
		"(*google.golang.org/grpc.clientStream).SendMsg", "(*google.golang.org/grpc.clientStream).RecvMsg",
		"(*google.golang.org/grpc.addrConnStream).SendMsg", "(*google.golang.org/grpc.addrConnStream).RecvMsg",
		"google.golang.org/grpc.Invoke", "google.golang.org/grpc.NewClientStream"} {
		prims[n] = prim{io: ioNet, values: []catalog.ErrorValue{unavailable, deadline}}
	}
	for _, n := range []string{"google.golang.org/grpc.Dial", "google.golang.org/grpc.DialContext"} {
		prims[n] = prim{io: ioNet, values: []catalog.ErrorValue{deadline}}
	}
	// Writes whose errors come only with the end of the connection or
	// stream they write to: a server's response to an HTTP request, a
	// server stream's message. An error returned while the connection
	// lives on is no fault that can happen (the peer would see a complete
	// empty response, or a stream that stays open and silent, instead of
	// a broken connection), so these are delay and crash sites only.
	// Measured on etcd: an injected Unavailable at the watch stream's Send
	// left the client's watch open and silent, and an ECONNRESET at the
	// peer /version handler's Write gave the asking member an empty body
	// ("unexpected end of JSON input") — neither can happen for real.
	for _, n := range []string{"(*google.golang.org/grpc.serverStream).SendMsg",
		"(*net/http.response).Write", "(*net/http.response).WriteString", "(*net/http.response).ReadFrom",
		"(*net/http.http2responseWriter).Write", "(*net/http.http2responseWriter).WriteString"} {
		prims[n] = prim{io: ioNet}
	}
	prims["(*google.golang.org/grpc.serverStream).RecvMsg"] = prim{io: ioNet,
		values: []catalog.ErrorValue{grpcStatus("Canceled", "context canceled"), eofErr}}
}

// wrapperFunc is a standard function that reads from or writes to one of
// its arguments: its failures are those of the argument's dynamic types.
type wrapperFunc struct {
	args  []int    // argument indices
	ops   []string // "read"/"write" per argument
	extra []catalog.ErrorValue
}

var wrapperFuncs = map[string]wrapperFunc{
	"io.ReadFull":           {[]int{0}, []string{"read"}, []catalog.ErrorValue{unexpectedEOFErr}},
	"io.ReadAtLeast":        {[]int{0}, []string{"read"}, []catalog.ErrorValue{unexpectedEOFErr}},
	"io.ReadAll":            {[]int{0}, []string{"read"}, nil},
	"io.Copy":               {[]int{0, 1}, []string{"write", "read"}, nil},
	"io.CopyN":              {[]int{0, 1}, []string{"write", "read"}, nil},
	"io.CopyBuffer":         {[]int{0, 1}, []string{"write", "read"}, nil},
	"io.WriteString":        {[]int{0}, []string{"write"}, nil},
	"fmt.Fprintf":           {[]int{0}, []string{"write"}, nil},
	"fmt.Fprint":            {[]int{0}, []string{"write"}, nil},
	"fmt.Fprintln":          {[]int{0}, []string{"write"}, nil},
	"encoding/binary.Read":  {[]int{0}, []string{"read"}, []catalog.ErrorValue{unexpectedEOFErr}},
	"encoding/binary.Write": {[]int{0}, []string{"write"}, nil},
}

// wrapperType is a standard type built around a reader or writer by a
// constructor: its methods fail as the wrapped value does.
type wrapperType struct {
	ctors map[string]int    // constructor function -> argument index
	ops   map[string]string // method -> "read"/"write" on the wrapped value
}

var wrapperTypes = map[string]wrapperType{
	"*bufio.Writer": {
		ctors: map[string]int{"bufio.NewWriter": 0, "bufio.NewWriterSize": 0},
		ops: map[string]string{"Write": "write", "WriteString": "write", "WriteByte": "write", "WriteRune": "write",
			"Flush": "write", "ReadFrom": "write"},
	},
	"*bufio.Reader": {
		ctors: map[string]int{"bufio.NewReader": 0, "bufio.NewReaderSize": 0},
		ops: map[string]string{"Read": "read", "ReadByte": "read", "ReadBytes": "read", "ReadString": "read",
			"ReadLine": "read", "ReadRune": "read", "ReadSlice": "read", "Peek": "read", "Discard": "read", "WriteTo": "read"},
	},
	"*io.LimitedReader":      {ctors: map[string]int{"io.LimitReader": 0}, ops: map[string]string{"Read": "read"}},
	"*io.SectionReader":      {ctors: map[string]int{"io.NewSectionReader": 0}, ops: map[string]string{"Read": "read", "ReadAt": "read"}},
	"*encoding/json.Encoder": {ctors: map[string]int{"encoding/json.NewEncoder": 0}, ops: map[string]string{"Encode": "write"}},
	"*encoding/json.Decoder": {ctors: map[string]int{"encoding/json.NewDecoder": 0}, ops: map[string]string{"Decode": "read"}},
}

// infallible are standard types whose Read/Write/Close never return an
// error that an injected I/O fault could imitate.
var infallible = map[string]bool{
	"*bytes.Buffer": true, "*strings.Builder": true, "*bytes.Reader": true, "*strings.Reader": true,
	"io.discard": true, "*hash/crc32.digest": true, "*hash/crc64.digest": true, "*hash/fnv.sum32": true,
	"*hash/fnv.sum32a": true, "*hash/fnv.sum64": true, "*hash/fnv.sum64a": true, "*hash/adler32.digest": true,
	"*hash/maphash.Hash": true, "*crypto/sha256.digest": true, "*crypto/sha1.digest": true, "*crypto/md5.digest": true,
	"*crypto/sha512.digest": true, "*crypto/internal/fips140/sha256.Digest": true,
	"*crypto/internal/fips140/sha512.Digest": true,
}

// ioMethods are interface methods whose implementations typically do I/O;
// a call to one whose dynamic types all cannot fail is an invalid
// injection and is pruned.
var ioMethods = map[string]bool{
	"Read": true, "ReadAt": true, "ReadFrom": true, "Write": true, "WriteAt": true,
	"WriteString": true, "WriteTo": true, "Sync": true, "Flush": true, "Close": true,
}

// syntheticLeaf names a dynamic type that is known only by its interface:
// conns and listeners made inside the standard library.
const (
	leafNetConn = "net.Conn"
	// leafHTTPResponse is the response writer net/http hands a handler:
	// its writes fail only with the client's connection (see the
	// connection-bound writes in init), so they are delay sites only.
	leafHTTPResponse = "net/http.ResponseWriter"
	leafNetListener  = "net.Listener"
	leafStdio        = "os.Stdout"
)

// stdResultLeaf maps a standard interface type returned by a standard
// function to the synthetic leaf it stands for.
var stdResultLeaf = map[string]string{
	"net.Conn":     leafNetConn,
	"net.Listener": leafNetListener,
}

// syntheticOp returns the primitive for method m of a synthetic leaf.
func syntheticOp(leaf, m string) (prim, bool) {
	switch leaf {
	case leafNetConn:
		switch m {
		case "Read":
			return prim{io: ioNet, values: netValues("read")}, true
		case "Write":
			return prim{io: ioNet, values: netValues("write")}, true
		}
	case leafNetListener:
		if m == "Accept" {
			return prim{io: ioNet, values: netValues("accept")}, true
		}
	case leafHTTPResponse:
		if m == "Write" || m == "WriteString" {
			return prim{io: ioNet}, true
		}
	}
	return prim{}, false
}

// TableErrors returns every error value the tables above can inject (the
// I/O primitives', the wrappers' extras and the synthetic leaves'), each
// once by expression, sorted: what the log checker must recognise when a
// node's log echoes an injected error.
func TableErrors() []catalog.ErrorValue {
	seen := map[string]catalog.ErrorValue{}
	add := func(vs []catalog.ErrorValue) {
		for _, v := range vs {
			seen[v.Expr] = v
		}
	}
	for _, p := range prims {
		add(p.values)
	}
	for _, w := range wrapperFuncs {
		add(w.extra)
	}
	for _, leaf := range []string{leafNetConn, leafNetListener} {
		for _, m := range []string{"Read", "Write", "Accept"} {
			if p, ok := syntheticOp(leaf, m); ok {
				add(p.values)
			}
		}
	}
	out := make([]catalog.ErrorValue, 0, len(seen))
	for _, v := range seen {
		out = append(out, v)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Expr < out[j].Expr })
	return out
}
