@embedded @kurtosis
Feature: Bytes received per node
  Each node's bytes received for a slot's payload (message data of every copy,
  duplicates included, plus IHAVE/IWANT/IDONTWANT control bytes naming its
  messages) divided by the payload's compressed size is the number of payload
  copies it received. Whole-payload gossip cost a median 4.4 copies in the
  published 500-node study; 32 KiB segments cost 1.4.

  Scenario Outline: payload copies per node stay within budget
    Given a segmented devnet
    When the devnet has revealed <slots> warm payloads
    Then the median node receives at most <p50> payload copies per warm slot
    And no node receives more than <max> payload copies in any warm slot

    Examples:
      | slots | p50 | max |
      | 3     | 2.0 | 4.0 |
