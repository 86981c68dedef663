@stress
Feature: Diffusion under the design's stress list
  The design was judged under a fixed list of stresses (5 % of data
  deliveries or of requests lost; withholders that announce and never
  answer, up to half the network; silent nodes that also forward nothing;
  mute nodes that also announce nothing; a source that omits parts; uplinks
  spread widely around the same mean; payloads from 128 KiB to 2 MiB), with
  one verdict: every honest node inside 3 s. Adversarial nodes are placed
  by the seed; the verdicts cover honest receivers only, and the report
  says how many nodes held each role.

  Budgets come from the seed spread and the same-seed spread together.
  Seed spread: sweeps/stress-ci.yaml (segmented-batch, tier2, tier3, seeds
  7-9; the table is in internal/devnet/embedded/README.md) and the same tier2 rows on seeds
  7-16, one run per seed, honest receivers only. Same-seed spread: these
  rows in 14 complete make e2e runs on 2026-12-01 (seed 7, the devnet the
  suite opens). Each budget is the worst of both plus about 20 %. With 16
  honest receivers and 3 warm slots the 99th percentile is the slowest
  honest node, one straggler's luck, so its same-seed spread is wide:
  tier2 99th percentile in the 14 runs (min-max) / worst seed of the sweeps:
  withholders 0.73-1.64 / 1.77 s, silent 1.29-2.11 / 1.96 s, mute
  1.45-2.50 / 1.60 s, data loss 0.69-0.86 / 0.93 s, request loss
  0.66-0.91 / 0.91 s, spread uplinks 0.73-0.95 / 1.66 s, 128 KiB
  0.36-0.50 / 0.63 s, 2 MiB 1.06-1.33 / 1.31 s; tier3 with 4 parts omitted
  0.54-0.64 / 0.59 s. Under mute nodes the budget is the design's 3 s
  verdict itself: seed 7 has reached 2.50 s, and a tighter budget failed
  one make e2e run in fourteen. Under silent nodes too, since a clean-clone
  bash .ci/run on 2026-12-03 (5302f4b, no tier 2 change since the 14 runs)
  reached 2.745 s (node-003, slot 2) against the 2.6 s it had; twelve
  reruns of that devnet the same hour gave 1.34-2.02 s
  (sweeps/results/tier2-silent50-reruns/), so 2.745 s is one run in 27
  (the 14, the 12 and the CI's), and its fifth more is past the verdict. Copies are the median node's over the
  slot, the quantity the budget checks, from both sources: 14 make e2e
  runs 2.1-2.4, 1.5-1.7, 1.4-1.6, 2.4-2.6, 2.4-2.6, 2.4-2.7, 2.0-2.4,
  2.6-2.8 and 2.8-3.0; worst seed of stress-ci (seeds 7-9, warm median
  over the slot) 2.38, 1.90, 1.80, 2.51, 2.54, 2.52, 2.33, 2.82 and 2.91.
  Each budget is at least about 20 % above both (adversarial nodes forward
  less, so honest nodes receive less).

  The tier4 rows are @extended (sixteen more devnets; make e2e-extended,
  nightly). They hold the design's verdict for tier 4, every honest node
  inside 3 s in every row, with budgets from one run of seeds 7-11
  (sweeps/results/stress-ci-tier4/) and, for the stresses tier 4 adds, of
  seeds 7-9 (sweeps/results/stress-tier4-ci/), worst seed plus about 20 %;
  AMD EPYC, 2 cores, 2026-12-02. Warm p99, worst seed: withholders 0.57 s,
  silent 1.47 s, mute 1.41 s, data loss 0.60 s, request loss 0.63 s, spread
  uplinks 1.36 s, 128 KiB 0.42 s, 2 MiB 1.36 s, 4 parts omitted 0.62 s,
  23 parts omitted (as many as the code spares) 0.99 s, withholders that
  never acknowledge 2.03 s, every uplink 10 Mbps 2.66 s. Under silent and
  mute nodes one straggler decides the 99th percentile, and runs of the
  same cells while tier 4's rules were being fixed reached 2.0-2.5 s:
  there the budget is the verdict itself or just below it. Copies are the
  median node's over the slot, worst seed plus about 20 %.
  The under-reporter rows are set from the build that demotes a peer
  echoing our pushes (sweeps/results/tier4-echo-ci/, seeds 7-11, and seed 7
  six more times; 2026-12-03): warm p99 worst 0.64 s at 25 % and 1.62 s at
  50 % (seed 7's sixth rerun; the five seeds' worst 1.21 s, 2.82 s before
  it), copies over the slot worst 1.97 and 1.79, up from 1.5 because honest
  nodes now take the pushes the under-reporters took.
  The padding under-reporter rows (each pusher is told what it sent and one
  part more) are set from the build whose echo rule judges a peer's latest
  inventory and spares peers that claim decodes (07ba1b1;
  sweeps/results/tier4-padding-ci/after/, seeds 7-11, and seed 7 six more
  times in seed7-reruns/; 2026-12-03): warm p99 worst 0.61 s at 25 % and
  2.01 s at 50 % (seed 7's first rerun; the other ten runs at 50 %
  0.51-1.09 s), copies over the slot worst 1.97 and 1.83. At 25 % the
  budget is the under-reporter row's; at 50 % one straggler decides the
  99th percentile, as under mute nodes, and the budget is theirs.

  Scenario Outline: honest nodes hold every payload under <stress> (<mode>)
    Given a <mode> devnet under stress "<stress>"
    When the devnet has revealed <slots> warm payloads
    Then every warm payload is at least <fill> of <payload> bytes raw
    And every node completes every warm payload within <max> of the reveal
    And the 99th percentile of completion from the reveal is at most <p99>
    And the median node receives at most <copies> payload copies over a warm slot
    And the PTC votes payload present in every warm slot

    @embedded
    Examples: ci preset, tier 2 and the code
      | mode  | stress               | slots | fill | payload | max | p99    | copies |
      | tier2 | withholder=50%       | 3     | 90%  | 1048576 | 3s  | 2200ms | 3.0    |
      | tier2 | silent=50%           | 3     | 90%  | 1048576 | 3s  | 3000ms | 2.3    |
      | tier2 | mute=50%             | 3     | 90%  | 1048576 | 3s  | 3000ms | 2.3    |
      | tier2 | loss-data=5%         | 3     | 90%  | 1048576 | 3s  | 1200ms | 3.2    |
      | tier2 | loss-requests=5%     | 3     | 90%  | 1048576 | 3s  | 1100ms | 3.1    |
      | tier2 | uplink-spread=80%    | 3     | 90%  | 1048576 | 3s  | 2000ms | 3.4    |
      | tier2 | payload-size=131072  | 3     | 90%  | 131072  | 3s  | 800ms  | 2.9    |
      | tier2 | payload-size=2097152 | 3     | 90%  | 2097152 | 3s  | 1600ms | 3.4    |
      | tier3 | omit=4               | 3     | 90%  | 1048576 | 3s  | 800ms  | 3.6    |

    @embedded @extended
    Examples: ci preset, tier 4 under every stress and the ones it adds
      | mode  | stress                     | slots | fill | payload | max | p99    | copies |
      | tier4 | withholder=50%             | 3     | 90%  | 1048576 | 3s  | 700ms  | 2.3    |
      | tier4 | silent=50%                 | 3     | 90%  | 1048576 | 3s  | 3000ms | 1.9    |
      | tier4 | mute=50%                   | 3     | 90%  | 1048576 | 3s  | 2500ms | 2.1    |
      | tier4 | loss-data=5%               | 3     | 90%  | 1048576 | 3s  | 750ms  | 2.4    |
      | tier4 | loss-requests=5%           | 3     | 90%  | 1048576 | 3s  | 800ms  | 2.5    |
      | tier4 | uplink-spread=80%          | 3     | 90%  | 1048576 | 3s  | 1700ms | 2.4    |
      | tier4 | payload-size=131072        | 3     | 90%  | 131072  | 3s  | 550ms  | 3.4    |
      | tier4 | payload-size=2097152       | 3     | 90%  | 2097152 | 3s  | 1700ms | 2.3    |
      | tier4 | omit=4                     | 3     | 90%  | 1048576 | 3s  | 800ms  | 2.5    |
      | tier4 | omit=23                    | 3     | 90%  | 1048576 | 3s  | 1200ms | 2.4    |
      | tier4 | unacking-withholder=50%    | 3     | 90%  | 1048576 | 3s  | 2500ms | 1.8    |
      | tier4 | under-reporter=25%         | 3     | 90%  | 1048576 | 3s  | 800ms  | 2.4    |
      | tier4 | under-reporter=50%         | 3     | 90%  | 1048576 | 3s  | 2000ms | 2.2    |
      | tier4 | padding-under-reporter=25% | 3     | 90%  | 1048576 | 3s  | 800ms  | 2.4    |
      | tier4 | padding-under-reporter=50% | 3     | 90%  | 1048576 | 3s  | 2500ms | 2.2    |
      | tier4 | uplink-mbps=10             | 3     | 90%  | 1048576 | 3s  | 3000ms | 2.3    |

  Scenario Outline: segments without a code strand every honest node when the source omits <omit> parts (<mode>)
    The ci payload is 23 segments; without parity no node can stand in for
    the parts the source never sent, so no honest node completes. The suite
    must see that failure and name every stranded node with the parts it held.

    Given a <mode> devnet under stress "omit=<omit>"
    When the devnet has revealed <slots> warm payloads
    Then no node completes any warm payload

    @embedded
    Examples: ci preset
      | mode            | omit | slots |
      | segmented-batch | 4    | 3     |

  # A broken network run as an ordinary budget check: these rows must fail,
  # naming the stranded nodes, slots and parts held. They are excluded from
  # the default filters (~@broken); TestBrokenNetworkFailsTheSuite (make e2e)
  # runs them and requires the suite to exit non-zero.
  @broken
  Scenario Outline: a source omitting <omit> parts fails the ordinary budgets (<mode>)
    Given a <mode> devnet under stress "omit=<omit>"
    When the devnet has revealed <slots> warm payloads
    Then every node completes every warm payload within <max> of the reveal

    @embedded
    Examples: ci preset
      | mode  | omit | slots | max |
      | tier2 | 4    | 3     | 3s  |
