package api

import (
	"encoding/base64"
	"net/http"
	"net/url"
	"strconv"
)

// Pagination: a list answers {"items": [...], "next": CURSOR} and, when
// there is a next page, a Link header (rel="next") with its URL. Pass
// ?cursor=CURSOR (and the same other parameters) for the next page; the
// cursor is opaque. limit is 1 to MaxLimit, DefaultLimit when not given.
const (
	DefaultLimit = 50
	MaxLimit     = 100
)

// page is one page of a list.
type page[T any] struct {
	Items []T `json:"items"`
	// Next is the cursor of the next page; absent on the last one.
	Next string `json:"next,omitempty"`
}

// pageParams reads limit and cursor; the cursor is returned decoded.
func pageParams(r *http.Request) (limit int, after string, err error) {
	limit = DefaultLimit
	q := r.URL.Query()
	if s := q.Get("limit"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 || n > MaxLimit {
			return 0, "", fail(http.StatusBadRequest, "limit must be a whole number from 1 to "+strconv.Itoa(MaxLimit))
		}
		limit = n
	}
	if c := q.Get("cursor"); c != "" {
		b, err := base64.RawURLEncoding.DecodeString(c)
		if err != nil || len(b) == 0 {
			return 0, "", fail(http.StatusBadRequest, "cursor is not one this API gave: pass the next value of the previous page")
		}
		after = string(b)
	}
	return limit, after, nil
}

// finish fills the page's next cursor and the Link header when more
// follows after position last.
func finish[T any](w http.ResponseWriter, r *http.Request, p *page[T], more bool, last string) {
	if p.Items == nil {
		p.Items = []T{}
	}
	if !more {
		return
	}
	p.Next = base64.RawURLEncoding.EncodeToString([]byte(last))
	q := r.URL.Query()
	q.Set("cursor", p.Next)
	next := url.URL{Path: r.URL.Path, RawQuery: q.Encode()}
	w.Header().Set("Link", "<"+next.String()+`>; rel="next"`)
}
