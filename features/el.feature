@kurtosis
Feature: Every execution client imports every revealed payload
  The beacon side says a payload was revealed and the PTC saw it; only the
  execution clients say it became part of their chains. For every warm slot
  the block hash the builder's bid committed to must be found on every node's
  EL (eth_getBlockByHash through go-ethereum's ethclient) by the reveal plus
  the budget. The check runs after the slots settled, so it proves "imported
  by then", and polls a block that is still missing until its deadline.

  Scenario Outline: every EL imports every warm payload within <budget> of the reveal (<mode>)
    Given a <mode> devnet
    When the devnet has revealed <slots> warm payloads
    Then every warm payload is at least <fill> of <payload> bytes raw
    And every EL imports every warm payload within <budget> of the reveal

    Examples: Kurtosis enclave
      | mode      | slots | fill | payload | budget |
      | segmented | 3     | 90%  | 1048576 | 4s     |
      | whole     | 3     | 90%  | 1048576 | 4s     |
