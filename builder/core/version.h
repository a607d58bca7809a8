#ifndef ZB_VERSION_H
#define ZB_VERSION_H
#define ZBENCH_VERSION "0.1.0"
/* The host<->guest protocol version (docs/protocol.md). */
#define ZB_PROTO_VERSION 1
#endif
