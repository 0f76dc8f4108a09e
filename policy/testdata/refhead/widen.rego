# Would add a body to data.shardgate.lib.changed_streams through a ref head.
package shardgate

lib.changed_streams contains "orders"
