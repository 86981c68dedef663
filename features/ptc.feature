Feature: PTC payload timeliness
  In every warm slot the payload-timeliness committee must see the builder's
  payload before PAYLOAD_DUE_BPS: more than PTC_SIZE/2 committee positions
  vote payload_present (PAYLOAD_TIMELY_THRESHOLD), or fork choice treats the
  payload as not timely.

  Scenario Outline: the PTC votes the payload present in every warm slot (<mode>)
    Given a <mode> devnet
    When the devnet has revealed <slots> warm payloads
    Then the PTC votes payload present in every warm slot

    @embedded
    Examples: embedded devnet
      | mode            | slots |
      | whole           | 3     |
      | segmented       | 3     |
      | segmented-batch | 3     |

    @kurtosis
    Examples: Kurtosis enclave
      | mode      | slots |
      | segmented | 3     |
