package faultproxy

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/xml"
	"fmt"
	"io"
	"net"
	"net/http"
	"slices"
	"strconv"
	"strings"

	"github.com/wharfdata/wharf/internal/crc32c"
)

// hopHeaders are the hop-by-hop headers a proxy must not forward.
var hopHeaders = []string{
	"Connection", "Keep-Alive", "Proxy-Authenticate", "Proxy-Authorization",
	"Proxy-Connection", "Te", "Trailer", "Transfer-Encoding", "Upgrade",
}

// apply answers r according to rule (nil: forward untouched).
func (p *Proxy) apply(w http.ResponseWriter, r *http.Request, rule *Rule) {
	if rule == nil {
		p.forward(w, r, nil)
		return
	}
	switch rule.Fault {
	case Reset:
		resetConn(w)
	case Status:
		_, _ = io.Copy(io.Discard, r.Body)
		status, code, msg := rule.errorCode()
		writeS3Error(w, r, status, code, msg)
	case Stall:
		if !p.wait(r, rule.Delay) {
			closeConn(w, false) // the client left or the proxy closes: answer nothing
			return
		}
		p.forward(w, r, nil)
	case Lost:
		p.lose(w, r)
	case DropBody:
		if err := p.dropBody(r, rule.After); err != nil {
			writeS3Error(w, r, http.StatusInternalServerError, "FaultProxyCannotResign", err.Error())
			return
		}
		p.forward(w, r, nil)
	case StallBody, Truncate, Corrupt:
		p.forward(w, r, rule)
	default:
		p.forward(w, r, nil)
	}
}

// roundTrip sends r to the backend with the Host header the client sent.
func (p *Proxy) roundTrip(r *http.Request) (*http.Response, error) {
	out := r.Clone(r.Context())
	out.RequestURI = ""
	out.URL.Scheme = p.target.Scheme
	out.URL.Host = p.target.Host
	out.Host = r.Host
	for _, h := range hopHeaders {
		out.Header.Del(h)
	}
	if r.ContentLength == 0 {
		out.Body = nil
	}
	return p.transport.RoundTrip(out)
}

// forward proxies r and copies the answer back, applying a StallBody or Truncate rule.
func (p *Proxy) forward(w http.ResponseWriter, r *http.Request, rule *Rule) {
	resp, err := p.roundTrip(r)
	if err != nil {
		if r.Context().Err() == nil {
			writeS3Error(w, r, http.StatusBadGateway, "FaultProxyBackendError", err.Error())
		}
		return
	}
	defer resp.Body.Close()
	h := w.Header()
	for k, vs := range resp.Header {
		h[k] = append([]string(nil), vs...)
	}
	for _, k := range hopHeaders {
		h.Del(k)
	}
	w.WriteHeader(resp.StatusCode)
	if rule == nil {
		_, _ = io.Copy(w, resp.Body)
		return
	}
	if rule.Fault == Corrupt {
		_, _ = io.Copy(w, &flipper{r: resp.Body, at: rule.After})
		return
	}
	head := rule.After
	if rule.Fault == Truncate && resp.ContentLength > 0 && head >= resp.ContentLength {
		head = resp.ContentLength - 1 // always leave something out
	}
	if _, err := io.CopyN(w, resp.Body, head); err != nil && err != io.EOF {
		return
	}
	rc := http.NewResponseController(w)
	_ = rc.Flush()
	if rule.Fault == Truncate {
		closeConn(w, false)
		return
	}
	if !p.wait(r, rule.Delay) {
		closeConn(w, false)
		return
	}
	_, _ = io.Copy(w, resp.Body)
}

// flipper passes r on with the byte at offset at inverted.
type flipper struct {
	r   io.Reader
	at  int64
	off int64
}

func (f *flipper) Read(b []byte) (int, error) {
	n, err := f.r.Read(b)
	if i := f.at - f.off; i >= 0 && i < int64(n) {
		b[i] ^= 0xff
	}
	f.off += int64(n)
	return n, err
}

// dropBody cuts r's body to its first n bytes, with a Content-Length to match, as a proxy
// that lost the rest would, and the body's hash and CRC-32C headers made again for what is
// left, so that the store stores the short body; a signature over them is made again.
func (p *Proxy) dropBody(r *http.Request, n int64) error {
	head, err := io.ReadAll(io.LimitReader(r.Body, n))
	if err != nil {
		return err
	}
	_, _ = io.Copy(io.Discard, r.Body)
	r.Body = io.NopCloser(bytes.NewReader(head))
	r.ContentLength = int64(len(head))
	r.Header.Set("Content-Length", strconv.Itoa(len(head)))
	rehashed := false
	if h := r.Header.Get("X-Amz-Content-Sha256"); len(h) == sha256.Size*2 {
		// A signed payload: the hash of what is left, as a proxy that re-signs would send.
		sum := sha256.Sum256(head)
		r.Header.Set("X-Amz-Content-Sha256", hex.EncodeToString(sum[:]))
		rehashed = true
	}
	if r.Header.Get("X-Amz-Checksum-Crc32c") != "" {
		// And the checksum of what is left: the store cannot tell the body was cut.
		r.Header.Set("X-Amz-Checksum-Crc32c", crc32c.Format(crc32c.Sum(head)))
		rehashed = true
	}
	auth := r.Header.Get("Authorization")
	if !strings.HasPrefix(auth, sigV4Algorithm) {
		return nil
	}
	sig, err := parseSigV4(auth)
	if err != nil {
		return fmt.Errorf("faultproxy: re-sign after dropping the body: %w", err)
	}
	if !rehashed && !slices.Contains(sig.signedHeaders, "content-length") {
		return nil
	}
	return p.resign(r, sig)
}

// lose forwards r, reads the backend's whole answer, and resets the client's connection.
func (p *Proxy) lose(w http.ResponseWriter, r *http.Request) {
	resp, err := p.roundTrip(r)
	if err == nil {
		_, _ = io.Copy(io.Discard, resp.Body)
		_ = resp.Body.Close()
	}
	resetConn(w)
}

// resetConn closes the client's connection with a TCP RST.
func resetConn(w http.ResponseWriter) { closeConn(w, true) }

// closeConn hijacks the connection (flushing what was written) and closes it, with an RST
// when reset is set and an orderly FIN otherwise.
func closeConn(w http.ResponseWriter, reset bool) {
	conn, _, err := http.NewResponseController(w).Hijack()
	if err != nil {
		panic(http.ErrAbortHandler) // http.Server drops the connection quietly: still a fault
	}
	if tc, ok := conn.(*net.TCPConn); ok && reset {
		_ = tc.SetLinger(0)
	}
	_ = conn.Close()
}

type s3Error struct {
	XMLName   xml.Name `xml:"Error"`
	Code      string   `xml:"Code"`
	Message   string   `xml:"Message"`
	Resource  string   `xml:"Resource"`
	RequestID string   `xml:"RequestId"`
}

// writeS3Error answers with an S3-style XML error body.
func writeS3Error(w http.ResponseWriter, r *http.Request, status int, code, msg string) {
	body, _ := xml.Marshal(s3Error{Code: code, Message: msg, Resource: r.URL.Path, RequestID: "faultproxy"})
	body = append([]byte(xml.Header), body...)
	w.Header().Set("Content-Type", "application/xml")
	w.Header().Set("Content-Length", strconv.Itoa(len(body)))
	w.Header().Set("X-Amz-Request-Id", "faultproxy")
	w.WriteHeader(status)
	if r.Method != http.MethodHead {
		_, _ = w.Write(body)
	}
}
