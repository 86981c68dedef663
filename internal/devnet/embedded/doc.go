// Package embedded is the suite's default devnet: a seeded network of real
// go-libp2p gossipsub nodes on simulated links (x/simlibp2p over simnet;
// or, with net_model flows, package flownet's in-memory streams), run on a
// virtual clock in a testing/synctest bubble, as Simulate does for
// a Config, the run spec whose keys are `segdiff sim`'s flags and the sweep
// grids' keys. Open, devnet backend "embedded", runs `segdiff sim --serve`
// in a subprocess and hands the suite its nodes' metrics endpoints
// (Endpoints); README.md has the model and the measured figures.
package embedded
