Feature: PTC payload timeliness
  In every warm slot the payload-timeliness committee must see the builder's
  payload before PAYLOAD_DUE_BPS: more than PTC_SIZE/2 committee positions
  vote payload_present (PAYLOAD_TIMELY_THRESHOLD), or fork choice treats the
  payload as not timely.

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
