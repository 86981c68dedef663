@embedded @slow
Feature: The 500-node home-link study
  The configuration of the published study: 500 nodes on home links
  (50 Mbps up / 100 Mbps down), a 1 MiB payload (746 KB after snappy).
  Opt in with --godog.tags=@slow (make e2e-slow) or SEGDIFF_SLOW=1.

  Scenario Outline: segmented diffusion meets the budgets on 500 nodes
    Given a segmented devnet with preset "study-500"
    When the devnet has revealed <slots> warm payloads
    Then the PTC votes payload present in every warm slot
    And every node completes every warm payload within <max> of the reveal
    And the median completion from the reveal is at most <p50>
    And the median node receives at most <copies> payload copies per warm slot
    And every node's block-install delay is at most <install>

    Examples:
      | slots | max | p50 | copies | install |
      | 4     | 3s  | 1s  | 2.0    | 2s      |

  Scenario Outline: segmented diffusion is at least <speedup> times faster than whole payloads on 500 nodes
    Given identical whole and segmented devnets with preset "study-500"
    When each devnet has revealed <slots> warm payloads
    Then the segmented median completion is at least <speedup> times faster than whole

    Examples:
      | slots | speedup |
      | 4     | 3       |
