// Package smallfile reads the small files a config names (the config
// itself, TLS certificates and keys) safely: only regular files, and only
// up to a limit, so that a device (/dev/zero), a FIFO or a huge file is an
// error at once instead of a read that never ends or fills the memory.
package smallfile

import (
	"fmt"
	"io"
	"io/fs"
	"os"
	"time"
)

// readWait bounds a read that waits.
const readWait = 2 * time.Second

// Limit is the largest file Read and Check accept: 1 MiB.
const Limit = 1 << 20

// Check reports, as an error that names no path (callers name it), why
// the file at path cannot be read as a small file: it does not exist, it
// is not a regular file, or it is over Limit. The *fs.PathError of a file
// that cannot be found is wrapped.
func Check(path string) error {
	st, err := os.Stat(path)
	if err != nil {
		if pe, ok := err.(*fs.PathError); ok {
			return fmt.Errorf("%w", pe.Err)
		}
		return err
	}
	return checkInfo(st)
}

func checkInfo(st fs.FileInfo) error {
	switch m := st.Mode(); {
	case m.IsDir():
		return fmt.Errorf("is a directory")
	case !m.IsRegular():
		return fmt.Errorf("is not a regular file (%s)", kind(m))
	case st.Size() > Limit:
		return fmt.Errorf("is %d bytes, over the limit of %d (1 MiB)", st.Size(), Limit)
	}
	return nil
}

// kind names a file mode's type.
func kind(m fs.FileMode) string {
	switch {
	case m&fs.ModeNamedPipe != 0:
		return "a named pipe"
	case m&fs.ModeSocket != 0:
		return "a socket"
	case m&fs.ModeCharDevice != 0:
		return "a character device"
	case m&fs.ModeDevice != 0:
		return "a device"
	}
	return m.Type().String()
}

// Read reads the regular file at path, of at most Limit bytes. Its errors
// name the path.
func Read(path string) ([]byte, error) {
	// Checked before opening: opening a named pipe waits for a writer.
	st, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	if err := checkInfo(st); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if st, err = f.Stat(); err != nil {
		return nil, err
	}
	if err := checkInfo(st); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	// A regular file of the kernel's (/proc/kmsg) may wait for data that
	// never comes: its reads are bounded (files that cannot wait ignore
	// the deadline).
	_ = f.SetReadDeadline(time.Now().Add(readWait))
	// The file may have grown since: read one byte more than allowed.
	data, err := io.ReadAll(io.LimitReader(f, Limit+1))
	if err != nil {
		return nil, err
	}
	if len(data) > Limit {
		return nil, fmt.Errorf("%s: is over the limit of %d bytes (1 MiB)", path, Limit)
	}
	return data, nil
}
