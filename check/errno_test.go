package check

import (
	"database/sql"
	"database/sql/driver"
	"fmt"
	"go/constant"
	"go/importer"
	"go/token"
	"go/types"
	"io"
	"os"
	"regexp"
	"syscall"
	"testing"

	"github.com/gofault/gofault/analysis"
	"github.com/gofault/gofault/catalog"
	"github.com/gofault/gofault/record"
)

// TestInjectedErrorsRecognised checks that every error value the analysis
// tables can inject is recognised in a log line that echoes it: the line
// carries the text the injected value's Error method really writes,
// derived here from the value's Go expression (the errno's number as the
// compiler sees syscall's constant), not from the checker's own lookup.
func TestInjectedErrorsRecognised(t *testing.T) {
	syscallPkg, err := importer.ForCompiler(token.NewFileSet(), "gc", nil).Import("syscall")
	if err != nil {
		t.Fatalf("import syscall: %v", err)
	}
	errnoRE := regexp.MustCompile(`syscall\.(E[A-Z0-9]+)`)
	grpcRE := regexp.MustCompile(`^status\.Error\(codes\.(\w+), "(.*)"\)$`)
	stdValues := map[string]error{
		"io.EOF": io.EOF, "io.ErrUnexpectedEOF": io.ErrUnexpectedEOF, "driver.ErrBadConn": driver.ErrBadConn,
		"sql.ErrConnDone": sql.ErrConnDone, "os.ErrDeadlineExceeded": os.ErrDeadlineExceeded,
	}
	deadlineRE := regexp.MustCompile(`os\.ErrDeadlineExceeded`)
	values := analysis.TableErrors()
	if len(values) < 10 {
		t.Fatalf("analysis.TableErrors() = %d values, want the tables' values", len(values))
	}
	for _, v := range values {
		var text string
		switch {
		case errnoRE.MatchString(v.Expr):
			name := errnoRE.FindStringSubmatch(v.Expr)[1]
			c, ok := syscallPkg.Scope().Lookup(name).(*types.Const)
			if !ok {
				t.Errorf("%s: syscall.%s is not a constant", v.Expr, name)
				continue
			}
			n, _ := constant.Uint64Val(c.Val())
			text = syscall.Errno(n).Error()
		case deadlineRE.MatchString(v.Expr):
			text = os.ErrDeadlineExceeded.Error()
		case grpcRE.MatchString(v.Expr):
			m := grpcRE.FindStringSubmatch(v.Expr)
			text = fmt.Sprintf("rpc error: code = %s desc = %s", m[1], m[2])
		case stdValues[v.Expr] != nil:
			text = stdValues[v.Expr].Error()
		default:
			t.Errorf("%s (%s): no way to derive the injected text in this test; teach it", v.Name, v.Expr)
			continue
		}
		line := fmt.Sprintf(`{"level":"warn","ts":"2026-01-01T00:00:00Z","caller":"x/y.go:1","msg":"request failed","error":"op /data/x: %s"}`, text)
		l, ok := ParseLogLine(line)
		if !ok {
			t.Fatalf("unparsable test line %s", line)
		}
		tr := &record.Trial{Injections: []record.Injection{{Kind: catalog.KindError, Error: v.Name, Node: "n1", Time: l.Time}}}
		if rule, _ := dismiss(trialFaults(tr, nil, DefaultRecoveryBound), l, "n1", l.Time); rule != RuleEchoError {
			t.Errorf("injected %s (%s): log line echoing %q not recognised (rule %q)", v.Name, v.Expr, text, rule)
		}
	}
}
