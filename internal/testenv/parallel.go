package testenv

import (
	"flag"
	"runtime"
	"strconv"
)

// WidenParallel sets -test.parallel to twice the processors, unless the
// command line gave it, for a package whose parallel tests spend most of
// their time waiting (for the processes, brokers and blackholed links
// they start), so that one test a processor leaves the processors half
// idle. Call it from TestMain, before m.Run; it parses the flags. The
// package's tests that load every processor must not be parallel.
func WidenParallel() {
	if !flag.Parsed() {
		flag.Parse()
	}
	given := false
	flag.Visit(func(f *flag.Flag) { given = given || f.Name == "test.parallel" })
	if f := flag.Lookup("test.parallel"); f != nil && !given {
		f.Value.Set(strconv.Itoa(2 * runtime.GOMAXPROCS(0)))
	}
}
