Feature: PTC payload timeliness
  In every warm slot the payload-timeliness committee must see the builder's
  payload before PAYLOAD_DUE_BPS: more than PTC_SIZE/2 committee positions
  vote payload_present (PAYLOAD_TIMELY_THRESHOLD), or fork choice treats the
  payload as not timely.

  Positions are counted as the Gloas fork choice counts them: the committee
  has PTC_SIZE positions drawn by balance with replacement, and a member's
  vote sets every position it holds. On a network with fewer validators per
  slot than PTC_SIZE (768 validators: 24 a slot, 21 or 22 positions each) the
  threshold is still 256 of 512 positions, reached when members holding more
  than half of the positions vote. The Kurtosis backend reads the votes from
  the next block's payload_attestations and the committee from the state's
  ptc_window; the report names the members that voted. Prysm c40b59a casts no
  PTC vote in the Gloas fork epoch ("no canonical shuffling block"), so on a
  devnet forking at epoch 1 the suite runs from epoch 2 (.ci/real-devnet waits
  for slot 64); in the fork epoch this scenario fails, naming the slots.

  Scenario Outline: the PTC votes the payload present in every warm slot (<mode>)
    Given a <mode> devnet
    When the devnet has revealed <slots> warm payloads
    Then every warm payload is at least <fill> of <payload> bytes raw
    And the PTC votes payload present in every warm slot

    @embedded
    Examples: embedded devnet
      | mode            | slots | fill | payload |
      | whole           | 3     | 90%  | 1048576 |
      | segmented       | 3     | 90%  | 1048576 |
      | segmented-batch | 3     | 90%  | 1048576 |
      | tier2           | 3     | 90%  | 1048576 |
      | tier3           | 3     | 90%  | 1048576 |
      | tier4           | 3     | 90%  | 1048576 |
      | whole-paced     | 3     | 90%  | 1048576 |

    @kurtosis
    Examples: Kurtosis enclave
      | mode      | slots | fill | payload |
      | segmented | 3     | 90%  | 1048576 |
      | whole     | 3     | 90%  | 1048576 |
