// The client side of the protocol (its methods, the session API, OpenRPC) is built on the wire
// core that providers link alone; an app that imports this module gets both.
@_exported import ContextWire
