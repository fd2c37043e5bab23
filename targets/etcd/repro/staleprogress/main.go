// Command staleprogress reproduces, without gofault, the etcd watch bug
// behind the fuzz campaign's watch-lost-event finding (docs/policies.md,
// "Power-loss crashes"; releases from v3.5.8 to v3.7.4, rates in
// README.md): a RequestProgress response made before a watch existed is
// sent after that watch's created response, so clientv3, which broadcasts
// progress notifications with watch ID -1 to every watch of the stream,
// delivers it on the new watch, which has not been sent the events it
// declares delivered.
//
// It starts a one-member etcd, opens a raw gRPC watch stream with one
// watch L on the prefix and stops reading it, so that the server's
// sendLoop blocks in Send (HTTP/2 flow control) while L's events queue
// behind it — as gofault's 3 s delay of that Send did. It then asks for
// progress (the response, watch ID -1, queues behind L's events) and
// creates a watch W from an old revision (its created response goes to
// sendLoop's control channel), and reads the stream again. Each round
// reports whether W's created response came before the progress response.
//
// With -client it goes through clientv3 instead, on one context (so one
// stream) as a user with several watches would, through a TCP proxy that
// stops forwarding the server's bytes for a while (a slow client): it
// reports what the new watch's channel delivers first.
//
//	cd targets/etcd && go run ./repro/staleprogress -rounds 20
//	cd targets/etcd && go run ./repro/staleprogress -client -rounds 20
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log"
	"net"
	"net/url"
	"os"
	"strings"
	"sync"
	"time"

	pb "go.etcd.io/etcd/api/v3/etcdserverpb"
	clientv3 "go.etcd.io/etcd/client/v3"
	"go.etcd.io/etcd/server/v3/embed"
)

func main() {
	rounds := flag.Int("rounds", 20, "rounds, each on a new watch stream")
	viaClient := flag.Bool("client", false, "use clientv3 through a pausing proxy instead of a raw gRPC stream")
	flag.Parse()
	dir, err := os.MkdirTemp("", "staleprogress")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	cfg := embed.NewConfig()
	cfg.Dir = dir
	cfg.LogLevel = "error"
	cu, _ := url.Parse("http://127.0.0.1:23790")
	pu, _ := url.Parse("http://127.0.0.1:23800")
	cfg.ListenClientUrls, cfg.AdvertiseClientUrls = []url.URL{*cu}, []url.URL{*cu}
	cfg.ListenPeerUrls, cfg.AdvertisePeerUrls = []url.URL{*pu}, []url.URL{*pu}
	cfg.InitialCluster = cfg.InitialClusterFromName(cfg.Name)
	e, err := embed.StartEtcd(cfg)
	if err != nil {
		log.Fatal(err)
	}
	defer e.Close()
	<-e.Server.ReadyNotify()
	ctx := context.Background()
	big := strings.Repeat("x", 64<<10)
	if *viaClient {
		clientRounds(ctx, cu.Host, big, *rounds)
		return
	}
	cli, err := clientv3.New(clientv3.Config{Endpoints: []string{cu.String()}})
	if err != nil {
		log.Fatal(err)
	}
	defer cli.Close()
	stale := 0
	for r := 0; r < *rounds; r++ {
		if round(ctx, cli, big, fmt.Sprintf("r%d/", r)) {
			stale++
		}
	}
	fmt.Printf("%d of %d rounds: the new watch's created response came before a progress response made before it existed\n", stale, *rounds)
}

// round runs one round on a new stream; it reports whether W's created
// response preceded the -1 progress response.
func round(ctx context.Context, cli *clientv3.Client, big, prefix string) bool {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	first, err := cli.Put(ctx, prefix+"first", "1")
	if err != nil {
		log.Fatal(err)
	}
	old := first.Header.Revision
	st, err := pb.NewWatchClient(cli.ActiveConnection()).Watch(ctx)
	if err != nil {
		log.Fatal(err)
	}
	create := func(start int64) {
		if err := st.Send(&pb.WatchRequest{RequestUnion: &pb.WatchRequest_CreateRequest{CreateRequest: &pb.WatchCreateRequest{
			Key: []byte(prefix), RangeEnd: []byte(clientv3.GetPrefixRangeEnd(prefix)), StartRevision: start}}}); err != nil {
			log.Fatal(err)
		}
	}
	create(0) // L, synced, from the current revision
	if r, err := st.Recv(); err != nil || !r.Created {
		log.Fatalf("created L: %v %v", r, err)
	}
	// L's events fill the HTTP/2 window: sendLoop blocks in Send.
	for i := 0; i < 40; i++ {
		if _, err := cli.Put(ctx, fmt.Sprintf("%sbig%d", prefix, i), big); err != nil {
			log.Fatal(err)
		}
	}
	time.Sleep(100 * time.Millisecond)
	// Every watcher (L) is synced: the response, at the current revision,
	// with watch ID -1, queues behind L's events.
	if err := st.Send(&pb.WatchRequest{RequestUnion: &pb.WatchRequest_ProgressRequest{ProgressRequest: &pb.WatchProgressRequest{}}}); err != nil {
		log.Fatal(err)
	}
	time.Sleep(100 * time.Millisecond)
	create(old) // W, from an old revision: unsynced, its events follow
	time.Sleep(200 * time.Millisecond)
	var wID int64 = -2
	var seq []string
	createdFirst, done := false, false
	for !done {
		r, err := st.Recv()
		if err != nil {
			log.Fatal(err)
		}
		switch {
		case r.Created:
			wID = r.WatchId
			seq = append(seq, fmt.Sprintf("created W (id %d) at header %d", r.WatchId, r.Header.Revision))
		case r.WatchId == -1 && len(r.Events) == 0:
			seq = append(seq, fmt.Sprintf("progress -1 at revision %d", r.Header.Revision))
			createdFirst = wID >= 0
			if wID < 0 {
				done = true
			}
		case r.WatchId == wID && len(r.Events) > 0:
			seq = append(seq, fmt.Sprintf("W events %d-%d", r.Events[0].Kv.ModRevision, r.Events[len(r.Events)-1].Kv.ModRevision))
			done = true
		}
	}
	fmt.Println(strings.Join(seq, "; "))
	return createdFirst
}

// proxy forwards TCP connections to target; while paused it stops
// forwarding what the server sends.
type proxy struct {
	ln     net.Listener
	target string
	mu     sync.Mutex
	resume chan struct{} // nil when not paused
}

func newProxy(target string) *proxy {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		log.Fatal(err)
	}
	p := &proxy{ln: ln, target: target}
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			s, err := net.Dial("tcp", target)
			if err != nil {
				c.Close()
				continue
			}
			go func() { _, _ = io.Copy(s, c); s.Close() }()
			go p.down(c, s)
		}
	}()
	return p
}

// down copies the server's bytes to the client, waiting while paused.
func (p *proxy) down(c, s net.Conn) {
	defer c.Close()
	buf := make([]byte, 32<<10)
	for {
		n, err := s.Read(buf)
		p.mu.Lock()
		wait := p.resume
		p.mu.Unlock()
		if wait != nil {
			<-wait
		}
		if n > 0 {
			if _, werr := c.Write(buf[:n]); werr != nil {
				return
			}
		}
		if err != nil {
			return
		}
	}
}

func (p *proxy) pause() {
	p.mu.Lock()
	p.resume = make(chan struct{})
	p.mu.Unlock()
}

func (p *proxy) unpause() {
	p.mu.Lock()
	close(p.resume)
	p.resume = nil
	p.mu.Unlock()
}

// clientRounds runs the rounds through clientv3: watch L and, later, W on
// one context, a RequestProgress on it, the server's bytes held meanwhile.
func clientRounds(ctx context.Context, host, big string, rounds int) {
	p := newProxy(host)
	direct, err := clientv3.New(clientv3.Config{Endpoints: []string{"http://" + host}})
	if err != nil {
		log.Fatal(err)
	}
	defer direct.Close()
	stale := 0
	for r := 0; r < rounds; r++ {
		cli, err := clientv3.New(clientv3.Config{Endpoints: []string{"http://" + p.ln.Addr().String()}, MaxCallRecvMsgSize: 64 << 20})
		if err != nil {
			log.Fatal(err)
		}
		prefix := fmt.Sprintf("c%d/", r)
		first, err := direct.Put(ctx, prefix+"first", "1")
		if err != nil {
			log.Fatal(err)
		}
		wctx, cancel := context.WithCancel(clientv3.WithRequireLeader(ctx))
		lch := cli.Watch(wctx, prefix, clientv3.WithPrefix(), clientv3.WithCreatedNotify())
		<-lch // created
		p.pause()
		for i := 0; i < 40; i++ {
			if _, err := direct.Put(ctx, fmt.Sprintf("%sbig%d", prefix, i), big); err != nil {
				log.Fatal(err)
			}
		}
		time.Sleep(100 * time.Millisecond)
		if err := cli.RequestProgress(wctx); err != nil {
			log.Fatal(err)
		}
		time.Sleep(100 * time.Millisecond)
		// Watch returns once the created response arrives: after unpause.
		wchc := make(chan clientv3.WatchChan, 1)
		go func() {
			wchc <- cli.Watch(wctx, prefix, clientv3.WithPrefix(), clientv3.WithRev(first.Header.Revision))
		}()
		time.Sleep(200 * time.Millisecond)
		p.unpause()
		wch := <-wchc
		go func() {
			for range lch {
			}
		}()
		resp := <-wch
		var what string
		switch {
		case resp.IsProgressNotify():
			stale++
			what = fmt.Sprintf("a progress notification at revision %d", resp.Header.Revision)
			if next := <-wch; len(next.Events) > 0 {
				what += fmt.Sprintf(", then events %d-%d", next.Events[0].Kv.ModRevision, next.Events[len(next.Events)-1].Kv.ModRevision)
			}
		case len(resp.Events) > 0:
			what = fmt.Sprintf("events %d-%d", resp.Events[0].Kv.ModRevision, resp.Events[len(resp.Events)-1].Kv.ModRevision)
		default:
			what = fmt.Sprintf("%+v", resp)
		}
		fmt.Printf("watch from %d got first %s\n", first.Header.Revision, what)
		cancel()
		cli.Close()
	}
	fmt.Printf("%d of %d rounds: the new watch got a progress notification first, at a revision whose events it had not been sent\n", stale, rounds)
}
