package coordsim

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestRedisSlot(t *testing.T) {
	require.Equal(t, uint16(0x31C3), crc16([]byte("123456789")), "CRC16-CCITT XModem check value")
	tests := []struct {
		key  string
		want int
	}{
		{key: "foo", want: 12182},
		{key: "bar", want: 5061},
		{key: "hello", want: 866},
		{key: "{bar}:7", want: 5061},
		{key: "foo{bar}{zap}", want: 5061},
		{key: "foo{}{bar}", want: RedisSlot("foo{}{bar}")},
	}
	for _, tt := range tests {
		t.Run(tt.key, func(t *testing.T) {
			require.Equal(t, tt.want, RedisSlot(tt.key))
		})
	}
	require.NotEqual(t, RedisSlot("bar"), RedisSlot("foo{}{bar}"), "an empty hashtag hashes the whole key")
	require.Equal(t, RedisSlot("{bar"), RedisSlot("foo{{bar}}zap"), "the tag ends at the first }")
}
