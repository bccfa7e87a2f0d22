/*
 * LD_PRELOAD shim for the onvif-util interop test: onvif-util turns
 * multicast loopback off on its WS-Discovery socket, so a camera on the
 * same host never hears its probe. This keeps loopback on; nothing else of
 * the client changes.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <netinet/in.h>
#include <sys/socket.h>

int setsockopt(int fd, int level, int name, const void *val, socklen_t len)
{
	static int (*real)(int, int, int, const void *, socklen_t);
	if (!real)
		real = (int (*)(int, int, int, const void *, socklen_t))dlsym(RTLD_NEXT, "setsockopt");
	if (level == IPPROTO_IP && name == IP_MULTICAST_LOOP) {
		unsigned char one = 1;
		return real(fd, level, name, &one, sizeof one);
	}
	return real(fd, level, name, val, len);
}
