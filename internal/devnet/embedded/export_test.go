package embedded

// Test hooks into unexported code.
var SeedGlobalRand = seedGlobalRand
