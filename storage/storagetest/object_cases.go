package storagetest

import (
	"bytes"
	"errors"
	"maps"
	"testing"

	"github.com/vigia/vigia/storage"
)

func testRoundTrip(t *testing.T, s storage.Store) {
	key := "rec/cam-1/2024/05/06/07/1714979000000_60000.mp4"
	data := []byte("fragmented mp4 bytes")
	opts := storage.PutOptions{
		ContentType: "video/mp4",
		Metadata:    map[string]string{"Camera": "cam-1", "start-ms": "1714979000000"},
		Tags:        map[string]string{storage.TagRetentionDays: "7"},
	}
	put(t, s, key, data, opts)

	got, err := get(t, s, key, 0, -1)
	if err != nil {
		t.Fatalf("Get: %v", err)
	}
	if !bytes.Equal(got, data) {
		t.Fatalf("Get = %q, want %q", got, data)
	}
	obj, err := s.Stat(ctx(t), key)
	if err != nil {
		t.Fatalf("Stat: %v", err)
	}
	if obj.Key != key || obj.Size != int64(len(data)) || obj.ContentType != "video/mp4" || obj.Modified.IsZero() {
		t.Fatalf("Stat = %+v", obj)
	}
	wantMD := map[string]string{"camera": "cam-1", "start-ms": "1714979000000"}
	if !maps.Equal(obj.Metadata, wantMD) {
		t.Fatalf("Stat metadata = %v, want %v", obj.Metadata, wantMD)
	}
	tr, ok := s.(storage.TagReader)
	if !ok {
		return
	}
	tags, err := tr.Tags(ctx(t), key)
	if err != nil {
		t.Fatalf("Tags: %v", err)
	}
	if !maps.Equal(tags, opts.Tags) {
		t.Fatalf("Tags = %v, want %v", tags, opts.Tags)
	}
}

func testDefaultContentType(t *testing.T, s storage.Store) {
	tests := []struct {
		name, key, want string
	}{
		{"jpeg", "thumbs/c/1.jpg", "image/jpeg"},
		{"mp4", "videos/v1.mp4", "video/mp4"},
		{"unknown", "blob/x.vigiaunknown", "application/octet-stream"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			put(t, s, tc.key, []byte("x"), storage.PutOptions{})
			obj, err := s.Stat(ctx(t), tc.key)
			if err != nil {
				t.Fatalf("Stat: %v", err)
			}
			if obj.ContentType != tc.want {
				t.Fatalf("ContentType = %q, want %q", obj.ContentType, tc.want)
			}
			if len(obj.Metadata) != 0 {
				t.Fatalf("Metadata = %v, want none", obj.Metadata)
			}
		})
	}
}

func testRangedRead(t *testing.T, s storage.Store) {
	key := "range/obj"
	data := []byte("0123456789abcdefghij")
	put(t, s, key, data, storage.PutOptions{})
	tests := []struct {
		name           string
		offset, length int64
		want           string
		wantErr        error
	}{
		{name: "whole", offset: 0, length: -1, want: string(data)},
		{name: "head", offset: 0, length: 4, want: "0123"},
		{name: "middle", offset: 10, length: 5, want: "abcde"},
		{name: "tail", offset: 15, length: -1, want: "fghij"},
		{name: "last byte", offset: 19, length: 1, want: "j"},
		{name: "length past end", offset: 18, length: 100, want: "ij"},
		{name: "zero length", offset: 3, length: 0, want: ""},
		{name: "offset at end", offset: 20, length: -1, wantErr: storage.ErrInvalidRange},
		{name: "offset past end", offset: 25, length: 2, wantErr: storage.ErrInvalidRange},
		{name: "negative offset", offset: -1, length: 2, wantErr: storage.ErrInvalidRange},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := get(t, s, key, tc.offset, tc.length)
			if tc.wantErr != nil {
				if !errors.Is(err, tc.wantErr) {
					t.Fatalf("Get(%d, %d) err = %v, want %v", tc.offset, tc.length, err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("Get(%d, %d): %v", tc.offset, tc.length, err)
			}
			if string(got) != tc.want {
				t.Fatalf("Get(%d, %d) = %q, want %q", tc.offset, tc.length, got, tc.want)
			}
		})
	}
}

func testNotFound(t *testing.T, s storage.Store) {
	put(t, s, "present/a", []byte("a"), storage.PutOptions{})
	for _, key := range []string{"missing", "present/b", "present/a/below"} {
		_, err := s.Get(ctx(t), key, 0, -1)
		requireNotFound(t, "Get("+key+")", err)
		_, err = s.Get(ctx(t), key, 2, 3)
		requireNotFound(t, "ranged Get("+key+")", err)
		_, err = s.Stat(ctx(t), key)
		requireNotFound(t, "Stat("+key+")", err)
		if tr, ok := s.(storage.TagReader); ok {
			_, err = tr.Tags(ctx(t), key)
			requireNotFound(t, "Tags("+key+")", err)
		}
	}
	_, err := s.Stat(ctx(t), "present")
	requireNotFound(t, "Stat of a key's parent", err)
}

func testInvalidKeys(t *testing.T, s storage.Store) {
	tests := []struct{ name, key string }{
		{"empty", ""},
		{"absolute", "/etc/passwd"},
		{"parent", "../x"},
		{"inner parent", "a/../../b"},
		{"dot segment", "a/./b"},
		{"hidden", "a/.meta"},
		{"empty segment", "a//b"},
		{"trailing slash", "a/b/"},
		{"backslash", `a\b`},
		{"nul", "a\x00b"},
		{"newline", "a\nb"},
		{"bad utf8", "a\xffb"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := s.Put(ctx(t), tc.key, bytesReader([]byte("x")), 1, storage.PutOptions{})
			if !errors.Is(err, storage.ErrInvalidKey) {
				t.Fatalf("Put(%q) err = %v, want ErrInvalidKey", tc.key, err)
			}
			if _, err := s.Stat(ctx(t), tc.key); !errors.Is(err, storage.ErrInvalidKey) {
				t.Fatalf("Stat(%q) err = %v, want ErrInvalidKey", tc.key, err)
			}
			if err := s.Delete(ctx(t), []string{tc.key}); !errors.Is(err, storage.ErrInvalidKey) {
				t.Fatalf("Delete(%q) err = %v, want ErrInvalidKey", tc.key, err)
			}
		})
	}
	if _, err := s.List(ctx(t), "../", storage.ListOptions{}); !errors.Is(err, storage.ErrInvalidKey) {
		t.Fatalf("List(../) err = %v, want ErrInvalidKey", err)
	}
}

func testOverwrite(t *testing.T, s storage.Store) {
	key := "over/write.jpg"
	put(t, s, key, []byte("first version, longer"), storage.PutOptions{Metadata: map[string]string{"v": "1"}})
	put(t, s, key, []byte("second"), storage.PutOptions{})
	got, err := get(t, s, key, 0, -1)
	if err != nil || string(got) != "second" {
		t.Fatalf("Get after overwrite = %q, %v", got, err)
	}
	obj, err := s.Stat(ctx(t), key)
	if err != nil {
		t.Fatalf("Stat: %v", err)
	}
	if obj.Size != 6 || len(obj.Metadata) != 0 || obj.ContentType != "image/jpeg" {
		t.Fatalf("Stat after overwrite = %+v, want size 6, no metadata, image/jpeg", obj)
	}
}

func testFailingReader(t *testing.T, s storage.Store) {
	key := "fail/new"
	err := s.Put(ctx(t), key, &failingReader{n: 100 << 10}, 1<<20, storage.PutOptions{})
	if err == nil {
		t.Fatal("Put of a failing reader succeeded")
	}
	_, err = s.Stat(ctx(t), key)
	requireNotFound(t, "Stat after failed Put", err)

	old := "fail/existing"
	put(t, s, old, []byte("keep me"), storage.PutOptions{})
	if err := s.Put(ctx(t), old, &failingReader{n: 10}, 1000, storage.PutOptions{}); err == nil {
		t.Fatal("Put of a failing reader over an object succeeded")
	}
	got, err := get(t, s, old, 0, -1)
	if err != nil || string(got) != "keep me" {
		t.Fatalf("object after failed overwrite = %q, %v; want the old content", got, err)
	}
	entries, _ := listAll(t, s, "fail/", storage.ListOptions{})
	if len(entries) != 1 || entries[0] != old {
		t.Fatalf("List after failed Puts = %v, want [%s]", entries, old)
	}
}

func testSizeMismatch(t *testing.T, s storage.Store) {
	key := "size/short"
	if err := s.Put(ctx(t), key, streamOnly{bytesReader([]byte("12345"))}, 10, storage.PutOptions{}); err == nil {
		t.Fatal("Put of 5 bytes with size 10 succeeded")
	}
	_, err := s.Stat(ctx(t), key)
	requireNotFound(t, "Stat after short Put", err)
	// An unknown size is fine.
	if err := s.Put(ctx(t), key, streamOnly{bytesReader([]byte("12345"))}, -1, storage.PutOptions{}); err != nil {
		t.Fatalf("Put with unknown size: %v", err)
	}
	if obj, err := s.Stat(ctx(t), key); err != nil || obj.Size != 5 {
		t.Fatalf("Stat after Put of unknown size = %+v, %v", obj, err)
	}
}

func testPingDescribe(t *testing.T, s storage.Store) {
	if err := s.Ping(ctx(t)); err != nil {
		t.Fatalf("Ping: %v", err)
	}
	if d := s.Describe(); d == "" {
		t.Fatal("Describe is empty")
	}
}
