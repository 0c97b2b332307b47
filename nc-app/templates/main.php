<?php
// The chat page's mount point; the island (js/tamebi-main.js, built by
// web/) renders into it and reads the request token from OC.requestToken.
?>
<div id="tamebi"></div>
