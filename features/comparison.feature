@embedded
Feature: Whole-payload versus segmented diffusion
  On identical embedded networks (same preset, seed, topology and link
  classes) segmented diffusion must beat whole-payload gossip by a wide
  margin: the published 500-node study measured a median 4.9 s for whole
  payloads against 0.73 s for 32 KiB segments.

  Scenario Outline: segmented diffusion is at least <speedup> times faster than whole payloads
    Given identical whole and segmented devnets with preset "<preset>"
    When each devnet has revealed <slots> warm payloads
    Then the segmented median completion is at least <speedup> times faster than whole

    Examples:
      | preset | slots | speedup |
      | ci     | 3     | 3       |
