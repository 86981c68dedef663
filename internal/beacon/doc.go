// Package beacon reads what the suite needs from a beacon node's standard
// HTTP API, through go-eth2-client: the slot clock (genesis time, slot
// duration, PAYLOAD_DUE_BPS) and the payload-timeliness committee's votes on a
// slot's payload, taken from the payload attestations included on chain.
//
// Functions take the narrowest go-eth2-client provider interface they need
// (client.GenesisProvider, client.SpecProvider, ...), so tests can substitute
// any implementation; New builds a Client over the real HTTP service.
package beacon
