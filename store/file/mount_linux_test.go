package file

import "testing"

func TestFSTypeName(t *testing.T) {
	cases := map[int64]string{
		0xEF53: "ext4", 0x58465342: "xfs", 0x01021994: "tmpfs", 0x6969: "nfs",
		0xFF534D42: "cifs", 0x65735546: "fuse", 0x01021997: "9p", 0x794C7630: "overlay",
		0x12345:     "0x12345",
		-0x00ACB2BE: "cifs", // 0xFF534D42 as a 32-bit statfs returns it, sign-extended
	}
	for in, want := range cases {
		if got := fsTypeName(in); got != want {
			t.Errorf("fsTypeName(%#x) = %q, want %q", in, got, want)
		}
	}
}
