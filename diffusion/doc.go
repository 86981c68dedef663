// Package diffusion holds the payload diffusion policies of EIP-8411
// (segmented execution-payload diffusion) as code that runs on stock
// go-libp2p-pubsub through its extension points: no fork, no replace.
//
// A Policy is one diffusion mode (package mode lists them): the gossip
// topic and its message ids, how the builder publishes a payload, how a
// node verifies, reassembles and forwards what it receives, and how gossip
// bytes are attributed to slots. Policies are registered by mode name and
// created per network with New, so that state shared by a network's nodes
// (a whole payload's message-id registry) lives in one place.
//
// A node runs a policy through Env, the narrow view of the node a policy
// needs: its libp2p host, when a slot's block is installed and what it
// commits to, the node's Role (which hooks say whether it forwards,
// answers requests and announces), and Events, where the policy reports
// what it received and when the payload completed. The embedded devnet's
// node implements Env; a client implements it over its own block store and
// metrics and wires a policy the same way:
//
//	p, _ := diffusion.New(mode.Segmented, diffusion.Options{})
//	n := p.NewNode(env)                                   // before the router exists
//	ps, _ := pubsub.NewGossipSub(ctx, h, append(opts, n.RouterOptions()...)...)
//	_ = n.Join(ctx, ps)                                   // validators, topic, subscription
//	_ = n.Publish(ctx, p.Prepare(payload))               // on the builder, at the reveal
//
// The normative rule every policy keeps is "no relay before install": a
// payload message whose block is not installed is parked (AwaitInstall),
// never forwarded and never answered to a request, until the block is
// installed or InstallTimeout passes.
package diffusion
