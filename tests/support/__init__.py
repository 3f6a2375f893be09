"""Support code shared by the test folders (writers of test data, oracles, real servers and
sessions); imported as ``from tests.support.<module> import ...``."""
