package machine

import "testing"

func TestParseSize(t *testing.T) {
	tests := []struct {
		in   string
		want int64
		err  string
	}{
		{in: "4096", want: 4096},
		{in: "4096B", want: 4096},
		{in: "4096b", want: 4096},
		{in: "32k", want: 32 << 10},
		{in: "32K", want: 32 << 10},
		{in: "32KB", want: 32 << 10},
		{in: "32kb", want: 32 << 10},
		{in: "32KiB", want: 32 << 10},
		{in: "32 KiB", want: 32 << 10},
		{in: " 32k ", want: 32 << 10},
		{in: "1m", want: 1 << 20},
		{in: "1MiB", want: 1 << 20},
		{in: "30720K", want: 30 << 20},
		{in: "2g", want: 2 << 30},
		{in: "2GB", want: 2 << 30},
		{in: "1t", want: 1 << 40},
		{in: "1.25m", want: 1310720},
		{in: "0.5k", want: 512},
		{in: "0", want: 0},
		{in: "", err: `"" is not a size: empty`},
		{in: "k", err: `"k" is not a size: no number`},
		{in: "-1k", err: `"-1k" is not a size: negative`},
		{in: "32q", err: `"32q" is not a size: unknown unit "q" (want k, m, g or t, optionally followed by B or iB)`},
		{in: "32kk", err: `"32kk" is not a size: unknown unit "kk" (want k, m, g or t, optionally followed by B or iB)`},
		{in: "32iB", err: `"32iB" is not a size: unknown unit "iB" (want k, m, g or t, optionally followed by B or iB)`},
		{in: "1.2.3k", err: `"1.2.3k" is not a size: malformed number "1.2.3"`},
		{in: "1.k", err: `"1.k" is not a size: malformed number "1."`},
		{in: "1.5", err: `"1.5" is not a size: not a whole number of bytes`},
		{in: "0.3k", err: `"0.3k" is not a size: not a whole number of bytes`},
		{in: "99999999999t", err: `"99999999999t" is not a size: too large`},
		{in: "0x100", err: `"0x100" is not a size: unknown unit "x100" (want k, m, g or t, optionally followed by B or iB)`},
	}
	for _, tt := range tests {
		got, err := ParseSize(tt.in)
		if tt.err != "" {
			if err == nil || err.Error() != tt.err {
				t.Errorf("ParseSize(%q) = %d, %v; want error %s", tt.in, got, err, tt.err)
			}
			continue
		}
		if err != nil || got != tt.want {
			t.Errorf("ParseSize(%q) = %d, %v; want %d", tt.in, got, err, tt.want)
		}
	}
}

func TestFormatSize(t *testing.T) {
	tests := []struct {
		in   int64
		want string
	}{
		{0, "0B"},
		{100, "100B"},
		{1024, "1KiB"},
		{49152, "48KiB"},
		{1310720, "1280KiB"},
		{30 << 20, "30MiB"},
		{480 << 20, "480MiB"},
		{2 << 30, "2GiB"},
		{3 << 40, "3TiB"},
	}
	for _, tt := range tests {
		got := FormatSize(tt.in)
		if got != tt.want {
			t.Errorf("FormatSize(%d) = %q; want %q", tt.in, got, tt.want)
		}
		if back, err := ParseSize(got); err != nil || back != tt.in {
			t.Errorf("ParseSize(FormatSize(%d)) = %d, %v", tt.in, back, err)
		}
	}
}
