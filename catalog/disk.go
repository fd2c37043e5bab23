package catalog

// DiskCall describes a file read or write whose bytes the agent's hook can
// reach, so that a disk fault can alter what it reads (KindCorrupt) or cut
// what it writes (KindTorn). Argument indices count the call's arguments
// from 0, the receiver not included; -1 means none.
type DiskCall struct {
	// Write is set for a write (torn), clear for a read (corrupt).
	Write bool
	// Buf is the argument that holds the bytes read into or written;
	// -1 for a read whose first result is the bytes read (os.ReadFile).
	Buf int
	// N reports that the first result is the count of bytes read into
	// Buf (Read, ReadAt, io.ReadFull): only those are altered.
	N bool
	// Off is the argument holding the file offset (ReadAt, WriteAt).
	Off int
	// Name is the argument holding the file name of a whole-file read
	// or write (os.ReadFile, os.WriteFile), Perm a write's mode.
	Name, Perm int
	// Recv says the receiver is the file or the writer the bytes go to
	// (an *os.File, io.Writer or io.WriterAt method).
	Recv bool
}

// diskCalls are the calls a disk fault can act on, by the analysis's
// callee names (Site.Callee).
var diskCalls = map[string]DiskCall{
	"(*os.File).Read":   {Buf: 0, N: true, Off: -1, Name: -1, Perm: -1, Recv: true},
	"(*os.File).ReadAt": {Buf: 0, N: true, Off: 1, Name: -1, Perm: -1, Recv: true},
	"io.ReadFull":       {Buf: 1, N: true, Off: -1, Name: -1, Perm: -1},
	"io.ReadAtLeast":    {Buf: 1, N: true, Off: -1, Name: -1, Perm: -1},
	"os.ReadFile":       {Buf: -1, Off: -1, Name: 0, Perm: -1},
	"ioutil.ReadFile":   {Buf: -1, Off: -1, Name: 0, Perm: -1},
	"io.ReadAll":        {Buf: -1, Off: -1, Name: -1, Perm: -1},
	"ioutil.ReadAll":    {Buf: -1, Off: -1, Name: -1, Perm: -1},
	// Readers of any kind the analysis found reading a file.
	"(io.Reader).Read":     {Buf: 0, N: true, Off: -1, Name: -1, Perm: -1},
	"(io.ReaderAt).ReadAt": {Buf: 0, N: true, Off: 1, Name: -1, Perm: -1},
	"(*bufio.Reader).Read": {Buf: 0, N: true, Off: -1, Name: -1, Perm: -1},
	"(*os.File).Write":     {Write: true, Buf: 0, Off: -1, Name: -1, Perm: -1, Recv: true},
	// Writers of any kind the analysis found writing a file: the torn
	// prefix goes through the same writer.
	"(io.Writer).Write":     {Write: true, Buf: 0, Off: -1, Name: -1, Perm: -1, Recv: true},
	"(io.WriterAt).WriteAt": {Write: true, Buf: 0, Off: 1, Name: -1, Perm: -1, Recv: true},
	"(*os.File).WriteAt":    {Write: true, Buf: 0, Off: 1, Name: -1, Perm: -1, Recv: true},
	"os.WriteFile":          {Write: true, Buf: 1, Off: -1, Name: 0, Perm: 2},
	"ioutil.WriteFile":      {Write: true, Buf: 1, Off: -1, Name: 0, Perm: 2},
}

// DiskCallOf returns how a disk fault acts on a call of callee (a
// Site.Callee), and false for a call it cannot reach the bytes of.
func DiskCallOf(callee string) (DiskCall, bool) {
	d, ok := diskCalls[callee]
	return d, ok
}

// File roles (Site.FileRole).
const (
	FileLog      = "log"      // a write-ahead or commit log, a journal
	FileSnapshot = "snapshot" // a snapshot or checkpoint of the state
	FileMetadata = "metadata" // small state beside the data: a term, a vote, a manifest, a marker
	FileData     = "data"     // any other file of the node's data
)
