# The name and version on stdout (the version read as $VERSION).
--version
