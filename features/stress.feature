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

  Budgets come from two sweeps on the ci preset (one run per seed; honest
  receivers only): sweeps/stress-ci.yaml (segmented-batch, tier2, tier3,
  seeds 7-11; the table is in embedded/README.md) and the same tier2 rows on
  seeds 7-16. The time verdict is the design's, every honest node inside
  3 s, and nothing tighter: with 16 honest receivers and 3 warm slots a
  99th percentile is the slowest honest node, one straggler's luck, and the
  same seed 7 has given 0.75 s and 1.61 s under withholders and 1.60 s and
  2.50 s under mute nodes in separate runs, so a tail budget below 3 s made
  make e2e flaky. How the tail moves under stress is measured over seeds by
  the sweep (segdiff sweep compare gates it). Measured tier2 99th
  percentile, worst seed: withholders 1.77 s, silent 1.96 s, mute 1.60 s,
  data loss 0.90 s, request loss 0.91 s, spread uplinks 1.66 s, 128 KiB
  0.63 s, 2 MiB 1.31 s; tier3 with 4 parts omitted 0.59 s (seeds 7-11).
  Copies are gated: each budget is the worst seed's median copies per node
  and warm slot plus about 20 % (worst seed: 2.5, 1.9, 1.9, 2.7, 2.6, 2.8,
  2.4, 2.8 and 3.0; adversarial nodes forward less, so honest nodes receive
  less).

  Scenario Outline: honest nodes hold every payload under <stress> (<mode>)
    Given a <mode> devnet under stress "<stress>"
    When the devnet has revealed <slots> warm payloads
    Then every warm payload is at least <fill> of <payload> bytes raw
    And every node completes every warm payload within <max> of the reveal
    And the median node receives at most <copies> payload copies per warm slot
    And the PTC votes payload present in every warm slot

    @embedded
    Examples: ci preset, tier 2 and the code
      | mode  | stress               | slots | fill | payload | max | copies |
      | tier2 | withholders=50%      | 3     | 90%  | 1048576 | 3s  | 3.0    |
      | tier2 | silent=50%           | 3     | 90%  | 1048576 | 3s  | 2.3    |
      | tier2 | mute=50%             | 3     | 90%  | 1048576 | 3s  | 2.3    |
      | tier2 | loss-data=5%         | 3     | 90%  | 1048576 | 3s  | 3.2    |
      | tier2 | loss-requests=5%     | 3     | 90%  | 1048576 | 3s  | 3.1    |
      | tier2 | uplink-spread=80%    | 3     | 90%  | 1048576 | 3s  | 3.4    |
      | tier2 | payload-size=131072  | 3     | 90%  | 131072  | 3s  | 2.9    |
      | tier2 | payload-size=2097152 | 3     | 90%  | 2097152 | 3s  | 3.4    |
      | tier3 | omit=4               | 3     | 90%  | 1048576 | 3s  | 3.6    |

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
