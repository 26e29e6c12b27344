"""sk-ctrl: the controller that runs Simulation resources one at a time (docs/simulations.md)."""
