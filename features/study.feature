@embedded @slow
Feature: The 500-node home-link study
  The configuration of the published study: 500 nodes of degree 70 on home
  links (50 Mbps up / 100 Mbps down), a home builder, a 1 MiB payload (746 KB
  after snappy), five-region latency. Opt in with --godog.tags=@slow
  (make e2e-slow) or SEGDIFF_SLOW=1; each 500-node network takes tens of
  minutes of wall time on 2 cores.

  Measured on this network with stock go-libp2p-pubsub (seed 7, one warm
  payload): sequentially published segments median 2.29 s, slowest 2.35 s,
  6.65 copies per node; whole payloads median 7.08 s. The budgets below are
  that network's, except the 3x speed-up, which is the published claim.

  Scenario Outline: segmented diffusion meets the budgets on 500 nodes
    Given a segmented devnet with preset "study-500"
    When the devnet has revealed <slots> warm payloads
    Then the PTC votes payload present in every warm slot
    And every node completes every warm payload within <max> of the reveal
    And the median completion from the reveal is at most <p50>
    And the median node receives at most <copies> payload copies per warm slot
    And every node's block-install delay is at most <install>

    Examples:
      | slots | max | p50  | copies | install |
      | 3     | 3s  | 2.5s | 8.0    | 2s      |

  Scenario Outline: segmented diffusion is at least <speedup> times faster than whole payloads on 500 nodes
    Given identical whole and segmented devnets with preset "study-500"
    When each devnet has revealed <slots> warm payloads
    Then the segmented median completion is at least <speedup> times faster than whole

    Examples:
      | slots | speedup |
      | 3     | 3       |
