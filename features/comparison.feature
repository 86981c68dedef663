@embedded
Feature: Whole-payload versus segmented diffusion
  On identical embedded networks (same preset, seed, topology and link
  classes) segmented diffusion must beat whole-payload gossip by a wide
  margin: the published 500-node study measured a median 4.9 s for whole
  payloads against 0.73 s for 32 KiB segments.

  The gap grows with the number of store-and-forward hops a whole payload
  makes; on the 32-node ci preset whole payloads need few (median 1.9-2.6 s
  over seeds 7-16, sweeps/ci-budgets.yaml), and the 3x claim is checked on
  the 500-node study configuration (study.feature, @slow). Measured ratios
  of medians per seed there: segmented 1.35-2.00x, segmented-batch
  2.29-3.24x, tier2 3.32-5.04x, tier3 3.77-5.24x; and from
  sweeps/results/ci-budgets/ (seeds 7-16, 2026-12-02) tier4 4.34-5.57x,
  whole-paced 1.89-2.27x (rerun at 71dc412). Each budget sits about a quarter below the worst
  seed: the ratio carries the run-to-run spread of both networks.

  Tier 4's state is meant to remove bytes, not time (the design: "they did
  not make a clean uniform network faster"): on the ci preset its median
  node receives 0.61-0.72 of tier3's copies over the slot per seed
  (sweeps/results/ci-budgets/, seeds 7-16) at about tier3's median
  completion, so tier4 against tier3 is held on copies, worst seed plus
  about 20 %.

  Scenario Outline: <mode> diffusion is at least <speedup> times faster than whole payloads
    Given identical whole and <mode> devnets with preset "<preset>"
    When each devnet has revealed <slots> warm payloads
    Then the <mode> median completion is at least <speedup> times faster than whole

    Examples:
      | mode            | preset | slots | speedup |
      | segmented-batch | ci     | 3     | 1.8     |
      | segmented       | ci     | 3     | 1.1     |
      | tier2           | ci     | 3     | 2.5     |
      | tier3           | ci     | 3     | 2.8     |
      | tier4           | ci     | 3     | 3.2     |
      | whole-paced     | ci     | 3     | 1.4     |

  Scenario Outline: <lighter> receives at most <ratio> of <heavier>'s copies
    Given identical <heavier> and <lighter> devnets with preset "<preset>"
    When each devnet has revealed <slots> warm payloads
    Then the <lighter> median node receives at most <ratio> times the payload copies of <heavier> over a warm slot

    Examples:
      | lighter | heavier | preset | slots | ratio |
      | tier4   | tier3   | ci     | 3     | 0.87  |
